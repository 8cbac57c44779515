package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import io.attn.text.EmbedderOptions;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code attn serve --task}: jina-embeddings-v3's hub folder ({@code tests/families/jina-v3-hub}, task LoRA adapters)
 * served with its {@code retrieval.query} adapter merged; {@code /embed} and {@code /v1/embeddings} answer with that
 * task's vectors and its prompt first, within cosine 0.99999 and 1e-4 x norm of sentence-transformers' on that task's
 * merged weights ({@code tasks.json}, tools/make_jina_v3.py; the text module's TaskAdaptersTest holds the library to
 * the same judge).
 */
class TaskServeTest {
    static final Path MODEL = Path.of("../tests/families/jina-v3-hub");

    @Test
    @SuppressWarnings("unchecked")
    void aServedTaskModelAnswersWithItsTasksVectors() throws Exception {
        Map<String, Object> x = (Map<String, Object>) Json.read(MODEL.resolve("tasks.json"));
        List<List<Number>> want = null;
        for (Object o : (List<?>) x.get("runs")) {
            Map<String, Object> run = (Map<String, Object>) o;
            if ("retrieval.query".equals(run.get("task"))) want = (List<List<Number>>) run.get("embeddings");
        }
        String inputs = ApiTest.texts(((List<String>) x.get("texts"))
                .stream().map(t -> t.replace("\"", "\\\"")).toList());
        AttnServer server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                MODEL,
                EmbedderOptions.defaults().withTask("retrieval.query"),
                ServerOptions.defaults().withHost("127.0.0.1").withPort(0),
                "test");
        try (ServerFixture s = new ServerFixture(server, MODEL)) {
            HttpResponse<String> r = s.post("/embed", "{\"inputs\":" + inputs + ",\"truncate\":true}");
            assertEquals(200, r.statusCode(), r.body());
            PromptsTest.same("/embed", want, JsonParser.parseString(r.body()).getAsJsonArray());
            r = s.post("/v1/embeddings", "{\"input\":" + inputs + "}");
            assertEquals(200, r.statusCode(), r.body());
            var data = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("data");
            var rows = new com.google.gson.JsonArray();
            for (var d : data) rows.add(d.getAsJsonObject().getAsJsonArray("embedding"));
            PromptsTest.same("/v1/embeddings", want, rows);
            // Jina's API names the task per request: the served one answers the same, another is a 400 naming it
            r = s.post("/v1/embeddings", "{\"input\":" + inputs + ",\"task\":\"retrieval.query\"}");
            assertEquals(200, r.statusCode(), r.body());
            r = s.post("/v1/embeddings", "{\"input\":\"x\",\"task\":\"retrieval.passage\"}");
            assertEquals(400, r.statusCode(), r.body());
            org.junit.jupiter.api.Assertions.assertTrue(
                    r.body().contains("retrieval.passage") && r.body().contains("serves task \\\"retrieval.query"),
                    r.body());
        }
    }
}
