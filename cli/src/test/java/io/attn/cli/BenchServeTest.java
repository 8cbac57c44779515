package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.fixtures.TinyTextModel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn bench serve} loads a server its requests are answered by: every request 200 (the load generator once
 * sent a model name the server does not serve, and measured 0 sentences/s of 404s); an error is named on stderr.
 */
class BenchServeTest {
    @TempDir
    Path dir;

    @Test
    void everyRequestIsAnsweredAndCounted() throws Exception {
        Path model = TinyTextModel.folder(dir, true);
        Path texts = Files.writeString(dir.resolve("texts.txt"), "the sky is blue\na cat sat on the mat\nhello\n");
        for (String endpoint : new String[] {"openai", "tei"}) {
            var r = RunCommandTest.cli(
                    "bench",
                    "serve",
                    "--model",
                    model.toString(),
                    "--input",
                    texts.toString(),
                    "--clients",
                    "4",
                    "--seconds",
                    "2",
                    "--warmup",
                    "0", // every request counts: each client's first one at least, however slow the machine
                    "--device",
                    "cpu",
                    "--threads",
                    "1",
                    "--endpoint",
                    endpoint);
            assertEquals(0, r.code(), r.err());
            String last = r.out().strip().lines().reduce((a, b) -> b).orElse("");
            JsonObject o = JsonParser.parseString(last).getAsJsonObject();
            assertEquals(0, o.get("errors").getAsLong(), endpoint + ": " + r.err());
            assertTrue(o.get("sentences_per_s").getAsDouble() > 0, endpoint + ": " + last);
            assertTrue(!r.err().contains("requests failed"), r.err());
        }
    }

    @Test
    void failedRequestsAreNamed() throws Exception {
        Path texts = Files.writeString(dir.resolve("texts.txt"), "hello\n");
        // nothing listens on port 9 (discard) of loopback here: every request fails to connect
        var r = RunCommandTest.cli(
                "bench",
                "serve",
                "--url",
                "http://127.0.0.1:9",
                "--input",
                texts.toString(),
                "--clients",
                "1",
                "--seconds",
                "0.2",
                "--warmup",
                "0.2");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("requests failed; the first:"), r.err());
    }
}
