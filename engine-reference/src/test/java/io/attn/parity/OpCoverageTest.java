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
    void caseNamesAreUnique() {
        var names = ParityCases.all().stream().map(ParityCase::name).toList();
        assertTrue(names.size() == Set.copyOf(names).size(), "duplicate case names");
    }
}
