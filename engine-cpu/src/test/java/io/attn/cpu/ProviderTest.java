package io.attn.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.graph.Op;
import org.junit.jupiter.api.Test;

/** The provider is found through ServiceLoader and the backend answers the SPI as documented. */
class ProviderTest {
    @Test
    void foundByServiceLoaderAndOpens() {
        var probe = Backends.probeAll().stream()
                .filter(p -> p.backend().equals("cpu"))
                .findFirst()
                .orElseThrow();
        assertTrue(probe.available());
        assertTrue(probe.description().contains("-bit"), probe.description());
        try (var b =
                Backends.open("cpu", BackendOptions.defaults().withThreads(3)).backend()) {
            assertEquals("cpu", b.name());
            assertEquals(3, ((CpuBackend) b).threads());
        }
    }

    @Test
    void leavesAreNeverExecuted() {
        GraphBuilder g = new GraphBuilder();
        Node in = g.input("x", 2);
        try (CpuBackend b = new CpuBackend(BackendOptions.defaults().withThreads(1))) {
            assertTrue(b.supports(g.relu(in)));
            assertEquals(Op.INPUT, in.op());
            assertThrows(
                    IllegalStateException.class,
                    () -> b.execute(in, b.allocate(in.dtype(), 2), new io.attn.backend.Buffer[0]));
        }
    }
}
