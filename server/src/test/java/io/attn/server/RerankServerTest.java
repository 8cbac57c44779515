package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.fixtures.TinyTextModel;
import io.attn.io.Json;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several models in one server (an embedder, two cross-encoders, a classifier) and the endpoints of rerankers and
 * classifiers, against the judge committed in {@code tests/rerankers} ({@code tools/make_rerankers.py}: transformers
 * 5.18 and sentence-transformers 6.0.1): {@code /rerank} and {@code /v1/rerank} give {@code CrossEncoder.predict}'s
 * scores within 2e-6 (sigmoid) and 2e-5 (raw), ranked as {@code CrossEncoder.rank}; {@code /predict} gives
 * transformers' softmax within 2e-6, with truncation_direction left as {@code truncation_side="left"}; {@code /tokenize}
 * gives the tokenizer's ids; {@code /decode} inverts it; OpenAI {@code dimensions} cuts and re-normalizes; bad input is
 * one JSON error naming the problem.
 */
class RerankServerTest {
    static final Path ROOT = Path.of("../tests/rerankers");

    @TempDir
    static Path dir;

    static AttnServer server;
    static ServerFixture s;

    @BeforeAll
    static void start() throws Exception {
        Map<String, Path> models = new LinkedHashMap<>();
        models.put("tiny", TinyTextModel.folder(dir, true));
        models.put("bert-rr", ROOT.resolve("bert-reranker"));
        models.put("xlmr-rr", ROOT.resolve("xlm-roberta-reranker"));
        models.put("cls", ROOT.resolve("bert-classifier"));
        server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                models,
                EmbedderOptions.defaults(),
                ServerOptions.defaults().withHost("127.0.0.1").withPort(0),
                "test");
        s = new ServerFixture(server, models.get("tiny"));
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> expected(String name) {
        return (Map<String, Object>) Json.read(ROOT.resolve(name).resolve("expected.json"));
    }

    @SuppressWarnings("unchecked")
    static <T> List<T> list(Object o) {
        return (List<T>) o;
    }

    static String strings(List<String> l) {
        JsonArray a = new JsonArray();
        for (String x : l) a.add(x);
        return a.toString();
    }

    static String str(String x) {
        return new com.google.gson.JsonPrimitive(x).toString();
    }

    static void error(HttpResponse<String> r, int status, String code, String... words) {
        assertEquals(status, r.statusCode(), r.body());
        JsonObject e = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("error");
        assertEquals(code, e.get("code").getAsString(), r.body());
        for (String w : words) assertTrue(e.get("message").getAsString().contains(w), r.body());
    }

    @Test
    @SuppressWarnings("unchecked")
    void teiRerankGivesCrossEncoderScoresRanked() throws Exception {
        for (String[] m : new String[][] {{"bert-rr", "bert-reranker"}, {"xlmr-rr", "xlm-roberta-reranker"}}) {
            Map<String, Object> x = expected(m[1]);
            List<List<String>> pairs = list(x.get("pairs"));
            List<Number> scores = list(x.get("scores")), raw = list(x.get("raw_scores"));
            String query = pairs.get(0).get(0);
            List<String> passages = new ArrayList<>();
            for (int i = 0; i < 5; i++) passages.add(pairs.get(i).get(1)); // empty, CJK, past the max length
            for (boolean rawScores : new boolean[] {false, true}) {
                HttpResponse<String> r = s.post(
                        "/rerank",
                        "{\"model\":\"" + m[0] + "\",\"query\":" + str(query) + ",\"texts\":" + strings(passages)
                                + ",\"truncate\":true,\"return_text\":true,\"raw_scores\":" + rawScores + "}");
                assertEquals(200, r.statusCode(), r.body());
                JsonArray a = JsonParser.parseString(r.body()).getAsJsonArray();
                assertEquals(5, a.size());
                double last = Double.POSITIVE_INFINITY;
                for (JsonElement e : a) {
                    JsonObject o = e.getAsJsonObject();
                    int i = o.get("index").getAsInt();
                    double got = o.get("score").getAsDouble();
                    double want = (rawScores ? raw : scores).get(i).doubleValue();
                    assertEquals(want, got, rawScores ? 2e-5 : 2e-6, m[0] + " passage " + i);
                    assertEquals(passages.get(i), o.get("text").getAsString());
                    assertTrue(got <= last, "not sorted: " + r.body());
                    last = got;
                }
                if (m[0].equals("bert-rr") && !rawScores) {
                    List<Map<String, Object>> rank = list(x.get("rank"));
                    for (int k = 0; k < rank.size(); k++)
                        assertEquals(
                                ((Number) rank.get(k).get("corpus_id")).intValue(),
                                a.get(k).getAsJsonObject().get("index").getAsInt());
                }
            }
            // truncation_direction Left: transformers' truncation_side="left" (the judge's "left" scores)
            Map<String, Object> left = (Map<String, Object>) x.get("left");
            List<Number> leftScores = list(left.get("scores"));
            HttpResponse<String> lr = s.post(
                    "/rerank",
                    "{\"model\":\"" + m[0] + "\",\"query\":" + str(query) + ",\"texts\":" + strings(passages)
                            + ",\"truncate\":true,\"truncation_direction\":\"Left\"}");
            assertEquals(200, lr.statusCode(), lr.body());
            for (JsonElement e : JsonParser.parseString(lr.body()).getAsJsonArray()) {
                JsonObject o = e.getAsJsonObject();
                int i = o.get("index").getAsInt();
                assertEquals(leftScores.get(i).doubleValue(), o.get("score").getAsDouble(), 2e-6, m[0] + " left " + i);
            }
            // a pair past the maximum length without truncate: 413 naming the limit
            error(
                    s.post(
                            "/rerank",
                            "{\"model\":\"" + m[0] + "\",\"query\":" + str(query) + ",\"texts\":" + strings(passages)
                                    + "}"),
                    413,
                    "input_too_long",
                    "32 tokens");
        }
    }

    @Test
    void cohereRerankWithTopNAndDocuments() throws Exception {
        Map<String, Object> x = expected("bert-reranker");
        List<List<String>> pairs = list(x.get("pairs"));
        List<Number> scores = list(x.get("scores"));
        String query = pairs.get(0).get(0);
        List<String> docs = new ArrayList<>();
        for (int i = 0; i < 5; i++) docs.add(pairs.get(i).get(1));
        HttpResponse<String> r = s.post(
                "/v1/rerank",
                "{\"model\":\"bert-rr\",\"query\":" + str(query) + ",\"documents\":" + strings(docs)
                        + ",\"top_n\":2,\"return_documents\":true}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray results = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("results");
        assertEquals(2, results.size());
        List<Map<String, Object>> rank = list(x.get("rank"));
        for (int k = 0; k < 2; k++) {
            JsonObject o = results.get(k).getAsJsonObject();
            int i = o.get("index").getAsInt();
            assertEquals(((Number) rank.get(k).get("corpus_id")).intValue(), i);
            assertEquals(scores.get(i).doubleValue(), o.get("relevance_score").getAsDouble(), 2e-6);
            assertEquals(docs.get(i), o.getAsJsonObject("document").get("text").getAsString());
        }
        error(
                s.post("/v1/rerank", "{\"model\":\"bert-rr\",\"query\":\"q\",\"documents\":[\"a\",\"b\"],\"top_n\":3}"),
                400,
                "invalid_value",
                "top_n 3");
        error(
                s.post("/v1/rerank", "{\"model\":\"nope\",\"query\":\"q\",\"documents\":[\"a\"]}"),
                404,
                "model_not_found",
                "tiny",
                "bert-rr",
                "cls");
        error(
                s.post("/v1/rerank", "{\"model\":\"cls\",\"query\":\"q\",\"documents\":[\"a\"]}"),
                400,
                "wrong_model_kind",
                "/predict");
        error(s.post("/rerank", "{\"query\":\"q\",\"texts\":[]}"), 400, "invalid_value", "texts");
        error(s.post("/v1/embeddings", "{\"model\":\"bert-rr\",\"input\":\"a\"}"), 400, "wrong_model_kind");
    }

    @Test
    void predictGivesTransformersSoftmaxAndLeftTruncation() throws Exception {
        Map<String, Object> x = expected("bert-classifier");
        List<String> texts = list(x.get("texts"));
        List<String> labels = List.of("negative", "neutral", "positive");
        Map<String, Object> left = (Map<String, Object>) x.get("left");
        for (String dir : new String[] {"Right", "Left"}) {
            List<List<Number>> soft = list(dir.equals("Left") ? left.get("softmax") : x.get("softmax"));
            JsonArray batch = new JsonArray(); // TEI's batch: [["text"], ...]
            for (String t : texts) batch.add(JsonParser.parseString(strings(List.of(t))));
            HttpResponse<String> r = s.post(
                    "/predict",
                    "{\"inputs\":" + batch + ",\"truncate\":true,\"truncation_direction\":\"" + dir + "\"}");
            assertEquals(200, r.statusCode(), r.body());
            JsonArray a = JsonParser.parseString(r.body()).getAsJsonArray();
            for (int i = 0; i < texts.size(); i++) {
                JsonArray p = a.get(i).getAsJsonArray();
                assertEquals(3, p.size());
                for (JsonElement e : p) {
                    JsonObject o = e.getAsJsonObject();
                    int k = labels.indexOf(o.get("label").getAsString());
                    assertEquals(
                            soft.get(i).get(k).doubleValue(), o.get("score").getAsDouble(), 2e-6, dir + " " + i);
                }
            }
        }
    }

    /** One input's scores by label, from a /predict answer's list of {label, score}. */
    static double[] byLabel(JsonArray p, List<String> labels) {
        assertEquals(labels.size(), p.size());
        double[] out = new double[labels.size()];
        for (JsonElement e : p) {
            JsonObject o = e.getAsJsonObject();
            out[labels.indexOf(o.get("label").getAsString())] = o.get("score").getAsDouble();
        }
        for (int k = 1; k < p.size(); k++) // best first
        assertTrue(p.get(k - 1).getAsJsonObject().get("score").getAsDouble()
                >= p.get(k).getAsJsonObject().get("score").getAsDouble());
        return out;
    }

    @Test
    @SuppressWarnings("unchecked")
    void predictTakesTeisShapesAndSentencePairs() throws Exception {
        Map<String, Object> x = expected("bert-classifier");
        Map<String, Object> pairs = (Map<String, Object>) x.get("pairs");
        List<List<String>> pp = list(pairs.get("pairs"));
        List<List<Number>> pairSoft = list(pairs.get("softmax")), textSoft = list(x.get("softmax"));
        List<String> texts = list(x.get("texts"));
        List<String> labels = List.of("negative", "neutral", "positive");
        // a text: one list of labels (TEI's Single), not a list of lists
        HttpResponse<String> r = s.post("/predict", "{\"inputs\":" + JsonOut.string(texts.get(0)) + "}");
        assertEquals(200, r.statusCode(), r.body());
        double[] got = byLabel(JsonParser.parseString(r.body()).getAsJsonArray(), labels);
        for (int k = 0; k < 3; k++) assertEquals(textSoft.get(0).get(k).doubleValue(), got[k], 2e-6);
        // ["a"] is that text too; ["a", "b"] is a sentence pair (tokenized together, token types 0 and 1)
        r = s.post("/predict", "{\"inputs\":" + strings(List.of(texts.get(0))) + "}");
        got = byLabel(JsonParser.parseString(r.body()).getAsJsonArray(), labels);
        for (int k = 0; k < 3; k++) assertEquals(textSoft.get(0).get(k).doubleValue(), got[k], 2e-6);
        r = s.post("/predict", "{\"inputs\":" + strings(pp.get(4)) + ",\"truncate\":true}");
        assertEquals(200, r.statusCode(), r.body());
        got = byLabel(JsonParser.parseString(r.body()).getAsJsonArray(), labels);
        for (int k = 0; k < 3; k++) assertEquals(pairSoft.get(4).get(k).doubleValue(), got[k], 2e-6, "pair 4");
        // a batch of pairs and texts: [[a, b], [t], ...], a list of lists in order
        JsonArray batch = new JsonArray();
        for (List<String> p : pp) batch.add(JsonParser.parseString(strings(p)));
        batch.add(JsonParser.parseString(strings(List.of(texts.get(2)))));
        r = s.post("/predict", "{\"inputs\":" + batch + ",\"truncate\":true}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray a = JsonParser.parseString(r.body()).getAsJsonArray();
        assertEquals(pp.size() + 1, a.size());
        for (int i = 0; i < pp.size(); i++) {
            got = byLabel(a.get(i).getAsJsonArray(), labels);
            for (int k = 0; k < 3; k++)
                assertEquals(pairSoft.get(i).get(k).doubleValue(), got[k], 2e-6, "pair " + i + " label " + k);
        }
        got = byLabel(a.get(pp.size()).getAsJsonArray(), labels);
        for (int k = 0; k < 3; k++) assertEquals(textSoft.get(2).get(k).doubleValue(), got[k], 2e-6);
        // bad shapes: one JSON error naming the field
        error(s.post("/predict", "{\"inputs\":[\"a\",\"b\",\"c\"]}"), 400, "invalid_value", "inputs", "batch");
        error(s.post("/predict", "{\"inputs\":[[\"a\"],[]]}"), 400, "invalid_value", "inputs[1]");
        error(s.post("/predict", "{\"inputs\":[[\"a\"],\"b\"]}"), 400, "invalid_type", "inputs[1]");
        error(s.post("/predict", "{\"inputs\":[[\"a\",\"b\",\"c\"]]}"), 400, "invalid_value", "inputs[0]");
        error(s.post("/predict", "{\"inputs\":[]}"), 400, "invalid_value", "inputs");
        error(s.post("/predict", "{\"inputs\":[1]}"), 400, "invalid_type", "inputs");
        error(s.post("/predict", "{\"inputs\":" + strings(pp.get(4)) + "}"), 413, "input_too_long");
    }

    @Test
    void tokenizeAndDecode() throws Exception {
        Map<String, Object> x = expected("bert-classifier");
        List<String> texts = list(x.get("texts"));
        List<Map<String, Object>> items = list(x.get("items"));
        HttpResponse<String> r =
                s.post("/tokenize", "{\"model\":\"cls\",\"inputs\":" + strings(texts.subList(0, 3)) + "}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray a = JsonParser.parseString(r.body()).getAsJsonArray();
        for (int i = 0; i < 3; i++) {
            List<Number> want = list(items.get(i).get("input_ids"));
            JsonArray got = a.get(i).getAsJsonArray();
            assertEquals(want.size(), got.size());
            for (int k = 0; k < want.size(); k++)
                assertEquals(
                        want.get(k).intValue(),
                        got.get(k).getAsJsonObject().get("id").getAsInt());
            assertTrue(got.get(0).getAsJsonObject().get("special").getAsBoolean());
        }
        HttpResponse<String> d =
                s.post("/decode", "{\"model\":\"cls\",\"ids\":" + items.get(0).get("input_ids") + "}");
        assertEquals(200, d.statusCode(), d.body());
        assertEquals(
                "the quick brown fox jumps over the lazy dog.",
                JsonParser.parseString(d.body()).getAsString());
        error(s.post("/decode", "{\"ids\":[-1]}"), 400, "invalid_value");
    }

    @Test
    void modelsInfoAndMatryoshka() throws Exception {
        JsonArray data = JsonParser.parseString(s.get("/v1/models").body())
                .getAsJsonObject()
                .getAsJsonArray("data");
        assertEquals(4, data.size());
        assertEquals("bert-rr", data.get(1).getAsJsonObject().get("id").getAsString());
        JsonObject info =
                JsonParser.parseString(s.get("/info?model=cls").body()).getAsJsonObject();
        assertEquals("classify", info.get("model_type").getAsString());
        assertEquals(3, info.getAsJsonArray("labels").size());
        assertEquals(4, info.getAsJsonArray("models").size());
        error(s.get("/info?model=nope"), 404, "model_not_found");
        // dimensions: the first 8 of the unnormalized vector, then normalized (the model normalizes)
        HttpResponse<String> r =
                s.post("/v1/embeddings", "{\"model\":\"tiny\",\"input\":\"the sky\",\"dimensions\":8}");
        assertEquals(200, r.statusCode(), r.body());
        JsonArray v = JsonParser.parseString(r.body())
                .getAsJsonObject()
                .getAsJsonArray("data")
                .get(0)
                .getAsJsonObject()
                .getAsJsonArray("embedding");
        assertEquals(8, v.size());
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                Embedder raw =
                        Embedder.load(e, s.model, EmbedderOptions.defaults().withNormalize(false))) {
            float[] want = java.util.Arrays.copyOf(raw.embed("the sky"), 8);
            Embedder.normalize(want);
            float[] got = new float[8];
            for (int i = 0; i < 8; i++) got[i] = v.get(i).getAsFloat();
            assertArrayEquals(want, got);
        }
        String metrics = s.get("/metrics").body();
        assertTrue(metrics.contains("attn_model_requests_admitted{model=\"cls\"}"), metrics);
    }

    @Test
    void oneModelsOverloadIs429ForItAlone() throws Exception {
        Map<String, Path> models = new LinkedHashMap<>();
        Path tiny = TinyTextModel.folder(dir.resolve("two"), true);
        models.put("a", tiny);
        models.put("b", tiny);
        // one request admitted per model; a batch waits 1 s to fill, so the first request holds a's slot
        ServerOptions o = ServerOptions.defaults()
                .withHost("127.0.0.1")
                .withPort(0)
                .withMaxQueuedRequests(1)
                .withBatching(4096, 1000);
        try (ServerFixture two = new ServerFixture(
                AttnServer.start(
                        Engine.open(EngineOptions.defaults().withDevice("cpu")),
                        models,
                        EmbedderOptions.defaults(),
                        o,
                        "test"),
                tiny)) {
            var first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return two.post("/embed", "{\"model\":\"a\",\"inputs\":\"held\"}");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            for (int i = 0; i < 500 && two.server.admittedForTest() == 0; i++) Thread.sleep(2);
            Thread.sleep(50);
            error(two.post("/embed", "{\"model\":\"a\",\"inputs\":\"more\"}"), 429, "too_many_requests", "\"a\"");
            assertEquals(
                    200,
                    two.post("/embed", "{\"model\":\"b\",\"inputs\":\"other\"}").statusCode());
            assertEquals(200, first.get().statusCode());
        }
    }
}
