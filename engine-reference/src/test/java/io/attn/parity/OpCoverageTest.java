package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.Op;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Every op the engine computes must be covered by parity cases (INPUT and CONSTANT are leaves in every case). */
class OpCoverageTest {
    @Test
    void everyNonLeafOpHasSeveralCases() {
        Set<Op> missing = EnumSet.complementOf(EnumSet.of(Op.INPUT, Op.CONSTANT));
        missing.removeAll(ParityCases.all().stream().map(ParityCase::op).collect(Collectors.toSet()));
        assertTrue(missing.isEmpty(), "ops without a parity case: " + missing);
        for (Op op : Op.values())
            if (op != Op.INPUT && op != Op.CONSTANT)
                assertTrue(ParityCases.of(op).size() >= 3, op + " has fewer than 3 cases");
    }

    @Test
    void attentionHasTheFlashKernelsShapes() {
        // the head sizes the flash kernels take, each with rows whose keys are all masked and with keys over more than
        // two 64-key tiles (so every backend, not only the one with those kernels, is judged on them)
        for (int d : new int[] {32, 64, 128}) {
            var cases = ParityCases.of(Op.ATTENTION).stream()
                    .filter(c -> c.node().input(0).shape().dim(-1) == d)
                    .toList();
            assertTrue(cases.stream().anyMatch(c -> c.name().contains("all-masked")), "D=" + d + ": no all-masked row");
            assertTrue(
                    cases.stream().anyMatch(c -> c.node().input(1).shape().dim(2) > 128),
                    "D=" + d + ": no case with more than 128 keys");
        }
    }

    @Test
    void caseNamesAreUnique() {
        var names = ParityCases.all().stream().map(ParityCase::name).toList();
        assertTrue(names.size() == Set.copyOf(names).size(), "duplicate case names");
    }
}
