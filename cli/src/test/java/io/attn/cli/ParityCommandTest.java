package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.Op;
import io.attn.parity.LayerCases;
import io.attn.parity.ParityCases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code attn parity --precision}: the reduced-precision bounds reach the op and the layer cases; {@code --support}:
 * the op x backend table, and docs/ops.md is what it prints.
 */
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

    /** The committed table is what the command prints: regenerate with the command named in its header. */
    @Test
    void docsOpsMdIsWhatTheSupportCommandPrints() throws Exception {
        RunCommandTest.Result r = RunCommandTest.cli("parity", "--support", "--markdown");
        assertEquals(0, r.code(), r.out() + r.err());
        Path docs = Path.of("../docs/ops.md");
        assertEquals(
                r.out(),
                Files.exists(docs) ? Files.readString(docs) : "(no docs/ops.md)",
                "docs/ops.md is stale: run ./attn parity --support --markdown > docs/ops.md and commit it");
    }

    @Test
    void supportTableHasEveryOpAndEachDeclaredBackend() {
        RunCommandTest.Result r = RunCommandTest.cli("parity", "--support");
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(1).matches("op +cpu +cuda"), lines.get(1)); // the test-only faulty backend declares none
        for (Op op : Op.values())
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(op.name() + " ")), op + " missing:\n" + r.out());
        String attention = lines.stream()
                .filter(l -> l.startsWith("ATTENTION "))
                .findFirst()
                .orElseThrow();
        assertTrue(
                attention.matches("ATTENTION +yes +partial \\[1\\]"),
                attention); // cuda: no ragged batch over several batch rows
        assertTrue(r.out().contains("[1] a ragged batch of 2 batch rows"), r.out());
        RunCommandTest.Result cpu = RunCommandTest.cli("parity", "--support", "--device", "cpu");
        assertTrue(cpu.out().lines().toList().get(1).matches("op +cpu"), cpu.out());
        assertEquals(2, RunCommandTest.cli("parity", "--markdown").code()); // --markdown alone is a usage error
    }
}
