package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegistersTest {
    @Test
    void choosesByVectorWidthOnX86() {
        assertTrue(Registers.choose("", 256, true));
        assertTrue(Registers.choose("", 128, true));
        assertFalse(Registers.choose("", 512, true));
        assertFalse(Registers.choose("", 256, false)); // AArch64: 32 registers
    }

    @Test
    void aForcedSetWins() {
        assertFalse(Registers.choose("32", 256, true));
        assertTrue(Registers.choose("16", 512, true));
        var e = assertThrows(IllegalArgumentException.class, () -> Registers.choose("24", 256, true));
        assertTrue(e.getMessage().contains("attn.cpu.tiles must be 16 or 32"), e.getMessage());
    }

    /** {@code -Dattn.cpu.gemm.kc}: an integer of at least 16, else one line naming the property and the value. */
    @Test
    void theGemmKStepSettingIsCheckedWhenRead() {
        assertEquals(2048, Gemm.kc("2048"));
        assertEquals(256, Gemm.kc(" 256 "));
        assertEquals(16, Gemm.kc("16"));
        for (String bad : new String[] {"15", "0", "-512", "x", "", "2e3"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> Gemm.kc(bad), bad);
            assertEquals("-Dattn.cpu.gemm.kc must be an integer >= 16, not '" + bad + "'", e.getMessage());
        }
    }

    @Test
    void thisJvmsChoiceIsTheOneTheKernelsUse() {
        assertEquals(Registers.FEW ? 4 : 6, Gemm.MR);
        assertEquals(Registers.FEW ? 16 : 32, Registers.tiles());
        String forced = System.getProperty(Registers.PROPERTY, "");
        assertTrue(
                Registers.describe().contains(forced.isEmpty() ? "-bit vectors" : "forced by"), Registers.describe());
    }
}
