package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Each {@code with...} changes its own values and keeps every other one; the limits stay checked. */
class ServerOptionsTest {
    @Test
    void eachWitherChangesOnlyItsValues() {
        ServerOptions d = ServerOptions.defaults();
        ServerOptions o = d.withHost("0.0.0.0")
                .withPort(9)
                .withApiKey("k")
                .withCorsOrigin("*")
                .withBatching(100, 7)
                .withMaxQueuedRequests(3)
                .withRequestLimits(11, 12, 13)
                .withTimeouts(21, 22, 23, 24);
        assertEquals(
                new ServerOptions("0.0.0.0", 9, "k", "*", 100, 7, 3, 11, 12, 13, d.maxHeaderBytes(), 21, 22, 23, 24, 0),
                o);
        assertEquals(d, d.withPort(9).withPort(d.port())); // nothing else moved
        assertEquals(d.withBatching(1, 0).maxQueuedRequests(), d.maxQueuedRequests());
        assertNull(d.withApiKey(" ").apiKey()); // a blank key is no key
        assertThrows(IllegalArgumentException.class, () -> d.withMaxQueuedRequests(0));
        assertThrows(IllegalArgumentException.class, () -> d.withPort(70000));
    }
}
