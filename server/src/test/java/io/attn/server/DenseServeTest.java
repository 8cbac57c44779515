package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.io.Json;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A model with sentence-transformers Dense modules served ({@code tests/families/bert-dense}: CLS pooling, 32 -> 24 tanh,
 * 24 -> 16 with a projected residual, Normalize): {@code /embed} and {@code /v1/embeddings} answer within cosine 0.99999
 * and 1e-4 x norm of {@code SentenceTransformer.encode}; the vectors are the last Dense module's 16 wide, as {@code
 * /info} says, and {@code dimensions} past 16 is a 400 naming 16.
 */
class DenseServeTest {
    static final Path MODEL = Path.of("../tests/families/bert-dense");
    static ServerFixture s;
    static Map<String, Object> expected;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void start() {
        s = new ServerFixture(MODEL, ServerOptions.defaults(), true);
        expected = (Map<String, Object>) Json.read(MODEL.resolve("expected.json"));
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @SuppressWarnings("unchecked")
    static List<List<Number>> want() {
        Map<String, Object> e = (Map<String, Object>) ((List<?>) expected.get("encodings")).get(0);
        return (List<List<Number>>) e.get("embeddings");
    }

    @SuppressWarnings("unchecked")
    static String inputs() {
        return ApiTest.texts(((List<String>) expected.get("texts"))
                .stream().map(t -> t.replace("\"", "\\\"")).toList());
    }

    @Test
    void vectorsAreSentenceTransformersAfterTheDenseModules() throws Exception {
        HttpResponse<String> r = s.post("/embed", "{\"inputs\":" + inputs() + ",\"truncate\":true}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray tei = JsonParser.parseString(r.body()).getAsJsonArray();
        assertEquals(16, tei.get(0).getAsJsonArray().size());
        PromptsTest.same("/embed", want(), tei);

        r = s.post("/v1/embeddings", "{\"input\":" + inputs() + "}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray openai = new JsonArray();
        for (var d : JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("data"))
            openai.add(d.getAsJsonObject().getAsJsonArray("embedding"));
        PromptsTest.same("/v1/embeddings", want(), openai);
    }

    @Test
    void theWidthIsTheLastDenseModules() throws Exception {
        JsonObject info = JsonParser.parseString(s.get("/info").body()).getAsJsonObject();
        assertEquals(16, info.get("dimensions").getAsInt());
        HttpResponse<String> r = s.post("/v1/embeddings", "{\"input\":\"hello\",\"dimensions\":17}");
        LimitsTest.error(r, 400, "invalid_value");
        assertTrue(r.body().contains("have 16"), r.body());
        r = s.post("/v1/embeddings", "{\"input\":\"hello\",\"dimensions\":8}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray v = JsonParser.parseString(r.body())
                .getAsJsonObject()
                .getAsJsonArray("data")
                .get(0)
                .getAsJsonObject()
                .getAsJsonArray("embedding");
        assertEquals(8, v.size());
    }
}
