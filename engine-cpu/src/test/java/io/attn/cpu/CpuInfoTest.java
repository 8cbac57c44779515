package io.attn.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CpuInfoTest {
    private static final List<String> ZEN3 = List.of(
            "processor\t: 0",
            "vendor_id\t: AuthenticAMD",
            "cpu family\t: 25",
            "model\t\t: 1",
            "model name\t: AMD EPYC 7B13",
            "flags\t\t: fpu sse2 avx fma avx2 bmi2",
            "",
            "processor\t: 1",
            "cpu family\t: 26",
            "model\t\t: 2",
            "model name\t: other",
            "flags\t\t: avx2 avx512f");

    @Test
    void readsTheFirstProcessor() {
        CpuInfo c = CpuInfo.parse(ZEN3, 256, 2);
        assertEquals("AMD EPYC 7B13", c.name());
        assertEquals(25, c.family());
        assertEquals(1, c.model());
        assertTrue(c.avx2());
        assertFalse(c.avx512f());
        assertEquals("AMD EPYC 7B13 (family 25 model 1, avx2, no avx512f; JVM vectors 256-bit; 2 cores)", c.describe());
        assertEquals(
                "{\"name\":\"AMD EPYC 7B13\",\"family\":25,\"model\":1,\"avx2\":true,\"avx512f\":false,"
                        + "\"vector_bits\":256,\"cores\":2,\"tiles\":" + io.attn.cpu.ops.Registers.tiles()
                        + ",\"gemm\":" + io.attn.cpu.ops.Tuning.json() + ",\"attention\":"
                        + io.attn.cpu.ops.Tuning.attentionJson() + "}",
                c.json());
    }

    @Test
    void avx512AndMissingFields() {
        CpuInfo c = CpuInfo.parse(List.of("model name\t: \"quoted\"", "flags\t: avx2 avx512f avx512bw"), 512, 4);
        assertTrue(c.avx512f());
        assertEquals(-1, c.family());
        assertTrue(c.json().startsWith("{\"name\":\"\\\"quoted\\\"\",\"family\":-1,"), c.json());
    }

    @Test
    void hostIsReadable() {
        CpuInfo h = CpuInfo.host();
        assertTrue(h.vectorBits() >= 64 && h.cores() >= 1, h.describe());
    }
}
