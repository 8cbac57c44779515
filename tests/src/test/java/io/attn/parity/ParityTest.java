package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * One test per (parity case x backend provider on the class path). A provider whose probe says unavailable, or a node
 * its backend declares unsupported, is reported as SKIPPED (aborted) with the reason, never as passed.
 */
class ParityTest {
    private static final Map<String, Backend> OPEN = new ConcurrentHashMap<>();

    @AfterAll
    static void closeBackends() {
        OPEN.values().forEach(Backend::close);
        OPEN.clear();
    }

    @TestFactory
    Stream<DynamicNode> everyCaseOnEveryBackend() {
        List<BackendProvider> providers = Backends.providers();
        if (providers.isEmpty())
            return Stream.of(dynamicTest(
                    "no backend provider on the class path",
                    () -> Assumptions.abort("no BackendProvider registered (META-INF/services)")));
        List<ParityCase> cases = ParityCases.all();
        return providers.stream().map(p -> {
            ProbeResult probe = probe(p);
            return dynamicContainer(
                    p.name(),
                    cases.stream()
                            .map(c -> dynamicTest(c.name(), () -> {
                                if (!probe.available()) Assumptions.abort(p.name() + " unavailable: " + probe.reason());
                                Backend b = OPEN.computeIfAbsent(p.name(), n -> p.create(BackendOptions.defaults()));
                                if (!b.supports(c.node())) {
                                    // the CPU backend is the complete one: every op must run there
                                    if (p.name().equals("cpu"))
                                        org.junit.jupiter.api.Assertions.fail("cpu does not support " + c.node());
                                    Assumptions.abort(p.name() + " does not support " + c.node());
                                }
                                ParityResult r = ParityHarness.run(c, b);
                                assertTrue(
                                        r.pass(),
                                        () -> c.name() + " on " + p.name() + ": " + r.message() + "\n"
                                                + ParityReport.format(List.of(r)));
                            })));
        });
    }

    private static ProbeResult probe(BackendProvider p) {
        try {
            return p.probe();
        } catch (Throwable t) { // a probe must not throw; if it does, report it as the reason
            return ProbeResult.unavailable(p.name(), "probe threw " + t);
        }
    }
}
