package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The load goals of docs/server.md at full size (CI's long tests; the short forms run in every build): 200 clients
 * sending one byte a second beside normal requests, 10,000 hostile requests, and 60 s at 4x what the server admits.
 */
@Tag("long")
class LoadFullTest {
    @TempDir
    Path dir;

    @Test
    void twoHundredSlowClientsDoNotDelayANormalRequestBeyondOneSecond() throws Exception {
        LimitsTest.slowClients(dir, 200, 10);
    }

    @Test
    void tenThousandHostileRequestsGet4xxJsonAndTheHeapStaysFlat() throws Exception {
        LoadTest.hostileRequests(dir, 10_000);
    }

    @Test
    void sixtySecondsAtFourTimesCapacityGetOnly200sAnd429sInBoundedMemory() throws Exception {
        long rss = LoadTest.overload(dir, 32, 60); // 8 admitted, 32 clients
        assertTrue(rss < 1L << 30, "resident set reached " + rss / 1e6 + " MB");
    }
}
