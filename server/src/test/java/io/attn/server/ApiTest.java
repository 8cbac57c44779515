package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Embeddings;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The endpoints against the library: every vector the server returns is bitwise the {@link Embedder}'s for the same
 * text (which the text module checks against the double-precision reference and real models), normalized as each
 * API says; batching several clients' requests together changes no bit.
 */
class ApiTest {
    @TempDir
    static Path dir;

    static ServerFixture s;
    static Engine engine;
    static Embedder raw; // the same model, unnormalized
    static final List<String> TEXTS = List.of("the sky is blue", "what colour is the sky?", "", "a cat sat on the mat");

    @BeforeAll
    static void start() throws Exception {
        s = new ServerFixture(dir, ServerOptions.defaults());
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
        raw = Embedder.load(engine, s.model, EmbedderOptions.defaults().withNormalize(false));
    }

    @AfterAll
    static void stop() {
        s.close();
        raw.close();
        engine.close();
    }

    static float[] normalized(float[] v) {
        float[] c = v.clone();
        Embedder.normalize(c);
        return c;
    }

    static float[] floats(JsonArray a) {
        float[] v = new float[a.size()];
        for (int i = 0; i < v.length; i++) v[i] = a.get(i).getAsFloat();
        return v;
    }

    static String texts(List<String> t) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < t.size(); i++)
            b.append(i == 0 ? "" : ",").append('"').append(t.get(i)).append('"');
        return b.append(']').toString();
    }

    @Test
    void openAiEmbeddingsAreTheLibrarysNormalizedVectors() throws Exception {
        HttpResponse<String> r = s.post(
                "/v1/embeddings",
                "{\"model\":\"tiny-bert\",\"input\":" + texts(TEXTS) + ",\"user\":\"someone\",\"dimensions\":16}");
        assertEquals(200, r.statusCode(), r.body());
        JsonObject o = JsonParser.parseString(r.body()).getAsJsonObject();
        assertEquals("list", o.get("object").getAsString());
        Embeddings want = raw.embedWithUsage(TEXTS);
        JsonArray data = o.getAsJsonArray("data");
        assertEquals(TEXTS.size(), data.size());
        for (int i = 0; i < TEXTS.size(); i++) {
            JsonObject d = data.get(i).getAsJsonObject();
            assertEquals(i, d.get("index").getAsInt());
            assertArrayEquals(normalized(want.vectors()[i]), floats(d.getAsJsonArray("embedding")), "text " + i);
        }
        assertEquals(
                want.totalTokens(),
                o.getAsJsonObject("usage").get("prompt_tokens").getAsLong());
        assertEquals(
                want.totalTokens(),
                o.getAsJsonObject("usage").get("total_tokens").getAsLong());

        // base64: little-endian float32, the same bits
        r = s.post("/v1/embeddings", "{\"input\":\"the sky is blue\",\"encoding_format\":\"base64\"}");
        assertEquals(200, r.statusCode(), r.body());
        String b64 = JsonParser.parseString(r.body())
                .getAsJsonObject()
                .getAsJsonArray("data")
                .get(0)
                .getAsJsonObject()
                .get("embedding")
                .getAsString();
        ByteBuffer bb = ByteBuffer.wrap(Base64.getDecoder().decode(b64)).order(ByteOrder.LITTLE_ENDIAN);
        float[] v = new float[bb.remaining() / 4];
        for (int i = 0; i < v.length; i++) v[i] = bb.getFloat();
        assertArrayEquals(normalized(want.vectors()[0]), v);
    }

    @Test
    void teiEmbedNormalizesAsAskedAndRefusesLongTextsUnlessTruncating() throws Exception {
        HttpResponse<String> r = s.post("/embed", "{\"inputs\":" + texts(TEXTS) + ",\"normalize\":false}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray a = JsonParser.parseString(r.body()).getAsJsonArray();
        float[][] want = raw.embed(TEXTS);
        for (int i = 0; i < TEXTS.size(); i++)
            assertArrayEquals(want[i], floats(a.get(i).getAsJsonArray()));
        r = s.post("/embed", "{\"inputs\":\"the sky is blue\"}");
        assertArrayEquals(
                normalized(want[0]),
                floats(JsonParser.parseString(r.body()).getAsJsonArray().get(0).getAsJsonArray()));
        String longText = "the sky is blue ".repeat(20); // 80 words: more than the model's 32 positions
        r = s.post("/embed", "{\"inputs\":\"" + longText + "\"}");
        assertEquals(413, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"code\":\"input_too_long\""), r.body());
        r = s.post("/embed", "{\"inputs\":\"" + longText + "\",\"truncate\":true}");
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void concurrentRequestsAreBatchedAndEachGetsTheBitsItWouldAlone() throws Exception {
        List<String> many = new ArrayList<>();
        String[] words = {"the", "sky", "is", "blue", "cat", "sat", "on", "mat", "green", "grass"};
        for (int i = 0; i < 48; i++) {
            StringBuilder t = new StringBuilder();
            for (int w = 0; w <= i % 9; w++)
                t.append(words[(i * 3 + w) % words.length]).append(' ');
            many.add(t.toString().trim());
        }
        ExecutorService pool = Executors.newFixedThreadPool(24);
        try {
            List<Future<HttpResponse<String>>> got = new ArrayList<>();
            for (String t : many) got.add(pool.submit(() -> s.post("/v1/embeddings", "{\"input\":\"" + t + "\"}")));
            for (int i = 0; i < many.size(); i++) {
                HttpResponse<String> r = got.get(i).get();
                assertEquals(200, r.statusCode(), r.body());
                float[] v = floats(JsonParser.parseString(r.body())
                        .getAsJsonObject()
                        .getAsJsonArray("data")
                        .get(0)
                        .getAsJsonObject()
                        .getAsJsonArray("embedding"));
                assertArrayEquals(normalized(raw.embed(many.get(i))), v, "text " + i);
            }
        } finally {
            pool.shutdownNow();
        }
        String metrics = s.get("/metrics").body();
        // some forward pass held more than one text: requests were batched together
        double single = metric(metrics, "attn_batch_texts_bucket{model=\"tiny-bert\",le=\"1.0\"}");
        double passes = metric(metrics, "attn_batch_texts_count{model=\"tiny-bert\"}");
        assertTrue(passes > single, "no forward pass held two requests' texts:\n" + metrics);
    }

    @Test
    void healthInfoAndMetrics() throws Exception {
        assertEquals("{\"status\":\"ok\"}", s.get("/health").body());
        JsonObject info = JsonParser.parseString(s.get("/info").body()).getAsJsonObject();
        assertEquals("tiny-bert", info.get("model").getAsString());
        assertEquals(16, info.get("dimensions").getAsInt());
        assertEquals("cpu", info.get("device").getAsString());
        assertEquals(32, info.get("max_input_tokens").getAsInt());
        s.post("/v1/embeddings", "{\"input\":\"x\"}");
        HttpResponse<String> m = s.get("/metrics");
        assertEquals(200, m.statusCode());
        assertTrue(
                m.headers().firstValue("content-type").orElse("").startsWith("text/plain"),
                m.headers().toString());
        for (String name : List.of(
                "attn_requests_total{endpoint=\"/v1/embeddings\",model=\"tiny-bert\",status=\"200\"}",
                "attn_request_duration_seconds_bucket",
                "attn_requests_admitted",
                "attn_batch_texts_bucket",
                "attn_batch_tokens_bucket",
                "attn_tokens_total",
                "attn_texts_total")) assertTrue(m.body().contains(name), name + " missing:\n" + m.body());
    }

    static double metric(String text, String name) {
        return text.lines()
                .filter(l -> l.startsWith(name + " "))
                .mapToDouble(
                        l -> Double.parseDouble(l.substring(name.length() + 1).trim()))
                .findFirst()
                .orElse(0);
    }
}
