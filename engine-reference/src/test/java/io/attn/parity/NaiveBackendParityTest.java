package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness on a correct (if slow) float32 backend: every case must pass, which validates cases and bounds. */
class NaiveBackendParityTest {
    @Test
    void everyCasePassesOnTheNaiveBackend() {
        try (PlantedBugBackend b = new PlantedBugBackend()) {
            List<ParityResult> results = ParityHarness.runAll(ParityCases.all(), b);
            String report = ParityReport.format(results);
            assertTrue(results.stream().allMatch(ParityResult::pass), report);
            assertTrue(report.contains(results.size() + " of " + results.size() + " passed"), report);
        }
    }
}
