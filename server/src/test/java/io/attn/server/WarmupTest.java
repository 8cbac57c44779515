package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.fixtures.TinyTextModel;
import io.attn.text.EmbedderOptions;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --warmup}: each model (an embedder, a reranker, a classifier) runs warm-up batches for the time asked before
 * the port opens, then answers as usual.
 */
class WarmupTest {
    @TempDir
    Path dir;

    @Test
    void everyKindOfModelWarmsUpForTheTimeAskedThenAnswers() throws Exception {
        Map<String, Path> models = new LinkedHashMap<>();
        Path tiny = TinyTextModel.folder(dir, true);
        models.put("tiny", tiny);
        models.put("rr", RerankServerTest.ROOT.resolve("bert-reranker"));
        models.put("cls", RerankServerTest.ROOT.resolve("bert-classifier"));
        long t0 = System.nanoTime();
        try (ServerFixture s = new ServerFixture(
                AttnServer.start(
                        Engine.open(EngineOptions.defaults().withDevice("cpu")),
                        models,
                        EmbedderOptions.defaults(),
                        ServerOptions.defaults()
                                .withHost("127.0.0.1")
                                .withPort(0)
                                .withWarmup(300),
                        "test"),
                tiny)) {
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 3 * 300, "three models warmed up 300 ms each, but the start took " + ms + " ms");
            assertEquals(200, s.post("/embed", "{\"inputs\":\"the sky\"}").statusCode());
            assertEquals(
                    200,
                    s.post("/rerank", "{\"query\":\"q\",\"texts\":[\"a\",\"b\"]}")
                            .statusCode());
            assertEquals(200, s.post("/predict", "{\"inputs\":\"the sky\"}").statusCode());
        }
        assertEquals(0, ServerOptions.defaults().warmupMillis(), "the default is one short pass");
    }
}
