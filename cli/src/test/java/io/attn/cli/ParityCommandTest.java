package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.parity.LayerCases;
import io.attn.parity.ParityCases;
import org.junit.jupiter.api.Test;

/** {@code attn parity --precision}: the reduced-precision bounds reach the op and the layer cases. */
class ParityCommandTest {
    @Test
    void reducedPrecisionHoldsEveryCaseToItsLooserBound() {
        String op = ParityCases.all().get(0).name(),
                layer = LayerCases.cases().get(0).name();
        for (String[] run : new String[][] {{"fp32", "1.0e-05"}, {"bf16", "5.0e-02"}}) {
            RunCommandTest.Result r = RunCommandTest.cli(
                    "parity", "--device", "cpu", "--threads", "1", "--precision", run[0], "--filter", layer);
            assertEquals(0, r.code(), r.out() + r.err());
            String row =
                    r.out().lines().filter(l -> l.startsWith(layer)).findFirst().orElseThrow();
            assertTrue(row.contains(run[1]) && row.endsWith("PASS"), row);
        }
        RunCommandTest.Result r = RunCommandTest.cli(
                "parity", "--device", "cpu", "--threads", "1", "--precision", "tf32", "--filter", op);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("tf32 requested"), r.out()); // the cpu backend says what it computes
        assertTrue(r.out().contains("1.000e-02  PASS"), r.out());
    }

    @Test
    void variantsRunEachConfigurationOfTheBackendsPresent() {
        // the cpu backend has one path per op: --variants runs its one configuration; the cuda variants (fused and
        // unfused attention, each GEMM path) are run through the fake driver by engine-cuda's DriverPathEmulatedTest
        String op = ParityCases.all().get(0).name();
        RunCommandTest.Result r =
                RunCommandTest.cli("parity", "--device", "cpu", "--threads", "1", "--variants", "--filter", op);
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(1, r.out().lines().filter(l -> l.startsWith("== cpu")).count(), r.out());
    }
}
