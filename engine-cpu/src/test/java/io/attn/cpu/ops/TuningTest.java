package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cpu.CpuInfo;
import org.junit.jupiter.api.Test;

/** The per-CPU GEMM blocking: which table entry a CPU gets, and each property's check. */
class TuningTest {

    private static CpuInfo cpu(int family, int model, int bits) {
        return new CpuInfo("test", family, model, true, bits == 512, bits, 2);
    }

    @Test
    void theMeasuredXeonGetsItsEntryOnlyWithTheVectorWidthItWasMeasuredWith() {
        Tuning t = Tuning.choose("table", cpu(6, 207, 512));
        assertEquals(256, t.kc());
        assertEquals(32, t.mcTiles());
        assertEquals(1024, t.nc());
        assertTrue(t.packA());
        assertTrue(t.source().startsWith("table entry for family 6 model 207, 512-bit vectors"), t.source());
        assertEquals("table", t.from());
        // the same CPU under -XX:UseAVX=2 runs the 16-register tiles, which the entry was not measured with
        Tuning narrow = Tuning.choose("table", cpu(6, 207, 256));
        assertEquals(Tuning.DEFAULT.kc(), narrow.kc());
        assertEquals(Tuning.DEFAULT.packA(), narrow.packA());
    }

    @Test
    void anUnmeasuredCpuGetsTheDefaultsAndSaysSo() {
        for (CpuInfo c : new CpuInfo[] {cpu(23, 1, 256), cpu(26, 2, 512), cpu(6, 143, 512), cpu(-1, -1, 256)}) {
            Tuning t = Tuning.choose("table", c);
            assertEquals(Tuning.DEFAULT.kc(), t.kc());
            assertEquals(Tuning.DEFAULT.mcTiles(), t.mcTiles());
            assertEquals(Tuning.DEFAULT.nc(), t.nc());
            assertEquals(Tuning.DEFAULT.packA(), t.packA());
            assertTrue(t.source().startsWith("defaults: no table entry for family " + c.family()), t.source());
            assertEquals("default", t.from());
        }
    }

    @Test
    void offIgnoresTheTableAndAnythingElseIsOneLine() {
        Tuning t = Tuning.choose("off", cpu(6, 207, 512));
        assertEquals(Tuning.DEFAULT.kc(), t.kc());
        assertEquals("forced", t.from());
        assertEquals(Tuning.DEFAULT.packA(), t.packA());
        for (String bad : new String[] {"fast", "", "6/143", "6 / 207"}) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> Tuning.choose(bad, cpu(6, 207, 512)));
            assertEquals(
                    "-Dattn.cpu.tuning must be table, off or a table entry (6/207), not '" + bad + "'", e.getMessage());
        }
    }

    @Test
    void anEntryCanBeForcedOnAnyHost() {
        Tuning t = Tuning.choose("6/207", cpu(23, 1, 256));
        assertEquals(256, t.kc());
        assertEquals(32, t.mcTiles());
        assertEquals(1024, t.nc());
        assertTrue(t.packA());
        assertTrue(t.source().startsWith("forced by -Dattn.cpu.tuning=6/207"), t.source());
        assertEquals("forced", t.from());
    }

    @Test
    void blockSizesAreCheckedAndRoundedUpToWholeTiles() {
        String p = "attn.cpu.gemm.test.blocks";
        try {
            System.clearProperty(p);
            assertEquals(96, Tuning.blocks(p, 96, 6));
            System.setProperty(p, "100");
            assertEquals(102, Tuning.blocks(p, 96, 6));
            System.setProperty(p, " 192 ");
            assertEquals(192, Tuning.blocks(p, 96, 6));
            for (String bad : new String[] {"5", "0", "-6", "x", "", "4097", "1e3"}) {
                System.setProperty(p, bad);
                IllegalArgumentException e =
                        assertThrows(IllegalArgumentException.class, () -> Tuning.blocks(p, 96, 6), bad);
                assertEquals("-D" + p + " must be an integer from 6 to 4096, not '" + bad + "'", e.getMessage());
            }
        } finally {
            System.clearProperty(p);
        }
    }

    @Test
    void jsonNamesTheBlockingInUse() {
        // this JVM's: the defaults or this CPU's entry, no property set by the test run (CI's forced runs say forced)
        String j = Tuning.json();
        assertTrue(
                j.matches(
                        "\\{\"kc\":\\d+,\"mc\":\\d+,\"nc\":\\d+,\"a\":\"(packed|in place)\",\"from\":\"(tuned|table|default|forced)\"}"),
                j);
        Gemm.Blocking b = Gemm.host();
        assertTrue(j.contains("\"kc\":" + b.kc() + ",\"mc\":" + b.mc() + ",\"nc\":" + b.nc() + ","), j);
    }

    @Test
    void causalKeyTileFromThePropertyOrTheTuning() {
        Tuning t = Tuning.choose("off", CpuInfo.host());
        assertEquals(Attention.BC, t.causalTile());
        assertEquals(Attention.BC, Tuning.causalTile(null, t));
        for (int w : Attention.keyTiles()) assertEquals(w, Tuning.causalTile(" " + w + " ", t));
        // 4 vectors per chunk: 32 keys at 256 bits, 64 at 512; at most BC
        int vl = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.length();
        assertEquals(4 * vl, Attention.keyTiles()[0]);
        assertEquals(Attention.BC, Attention.keyTiles()[Attention.keyTiles().length - 1]);
        for (String bad : new String[] {"0", "8", String.valueOf(4 * vl + 1), "128", "-64", "wide", ""}) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> Tuning.causalTile(bad, t), bad);
            assertEquals(
                    "-D" + Tuning.CAUSAL_TILE + " must be one of " + java.util.Arrays.toString(Attention.keyTiles())
                            + " with this JVM's vectors, not '" + bad + "'",
                    e.getMessage());
        }
        String j = Tuning.attentionJson();
        assertTrue(j.matches("\\{\"causal_key_tile\":\\d+,\"from\":\"(tuned|table|default|forced)\"}"), j);
        assertTrue(j.contains("\"causal_key_tile\":" + Tuning.causalKeyTile() + ","), j);
        assertTrue(Tuning.describe().contains("causal attention: key tiles of " + Tuning.causalKeyTile() + " keys"));
    }

    @Test
    void columnBlocksNarrowOnlyWhereThreadsWouldIdleAndNotBelowPackingWidth() {
        int nr = Gemm.NR, n = 32 * nr; // 1024 columns at 512 bits
        // the Xeon's 1024^3 on 16 threads: 6 row blocks of 192 and one 1024-column block gave 6 tasks; now 4 column
        // blocks of 8 panels (24 tasks), not 6 of fewer panels, which would read A in place
        assertEquals(8 * nr, Gemm.columnBlock(1, 6, n, n, 16, 32, false, true));
        assertEquals(6 * nr, Gemm.columnBlock(1, 6, n, n, 16, 32, false, false));
        // unpacked B and at least a task per thread: left as it is (narrower blocks would pack A more often)
        assertEquals(n, Gemm.columnBlock(1, 3, n, n, 2, 4, false, true));
        // packed B: narrowed towards the target whatever the threads (as before)
        assertEquals(16 * nr, Gemm.columnBlock(1, 3, n, n, 2, 4, true, true)); // 2 parts: 6 tasks
        // enough row tasks: never narrowed
        assertEquals(n, Gemm.columnBlock(1, 32, n, n, 16, 32, true, true));
        // five column blocks on two threads (2304 = 4 x 512 + 256): six equal ones of 384 with B packed, as before
        // without it (each task would pack its own B columns)
        assertEquals(384, Gemm.columnBlock(1, 1, 2304, 512, 2, 4, true, true));
        assertEquals(512, Gemm.columnBlock(1, 1, 2304, 512, 2, 4, false, true));
        // four of 512 on two threads already share out evenly
        assertEquals(512, Gemm.columnBlock(1, 1, 2048, 512, 2, 4, true, true));
        assertEquals(n, Gemm.columnBlock(2, 16, n, n, 16, 32, false, true));
    }

    @Test
    void flagsAreTrueOrFalse() {
        String p = "attn.cpu.gemm.test.flag";
        try {
            System.clearProperty(p);
            assertTrue(Tuning.flag(p, true));
            assertFalse(Tuning.flag(p, false));
            System.setProperty(p, "TRUE");
            assertTrue(Tuning.flag(p, false));
            System.setProperty(p, "false");
            assertFalse(Tuning.flag(p, true));
            System.setProperty(p, "yes");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tuning.flag(p, true));
            assertEquals("-D" + p + " must be true or false, not 'yes'", e.getMessage());
        } finally {
            System.clearProperty(p);
        }
    }
}
