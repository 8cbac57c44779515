package io.attn.layers;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import io.attn.parity.LayerCases;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every {@link LayerCases} case on every backend provider against the independent reference (bound and reasoning in
 * {@link LayerCases}); an unavailable backend is reported as skipped.
 */
class LayerParityTest {
    @TestFactory
    Stream<DynamicTest> everyModuleOnEveryBackend() {
        List<DynamicTest> tests = new ArrayList<>();
        for (BackendProvider p : Backends.providers())
            for (LayerCases.Case c : LayerCases.cases())
                tests.add(DynamicTest.dynamicTest(p.name() + ": " + c.name(), () -> {
                    ProbeResult pr = p.probe();
                    Assumptions.assumeTrue(pr.available(), () -> p.name() + " unavailable: " + pr.reason());
                    try (Backend b = p.create(BackendOptions.defaults())) {
                        LayerCases.Result r = LayerCases.run(c, b);
                        assertTrue(r.pass(), r::message);
                    }
                }));
        assertTrue(!tests.isEmpty(), "no backend provider on the class path");
        return tests.stream();
    }
}
