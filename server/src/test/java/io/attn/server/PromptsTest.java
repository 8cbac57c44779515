package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
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
 * TEI's {@code prompt_name} on {@code /embed}, against sentence-transformers: the XLM-RoBERTa fixture of {@code
 * tests/families} (prompts {@code query: } and {@code passage: }, default {@code query}) served, each answer within
 * cosine 0.99999 and 1e-4 x norm of {@code SentenceTransformer.encode(texts, prompt_name=...)} (the text module's
 * FamiliesTest holds the library to the same bound); without {@code prompt_name} the default prompt applies, as in
 * sentence-transformers; a name the model does not have is a 400 naming the model's prompts.
 */
class PromptsTest {
    static final Path MODEL = Path.of("../tests/families/xlm-roberta");
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
    static List<List<Number>> encoding(String promptName) {
        for (Object o : (List<?>) expected.get("encodings")) {
            Map<String, Object> e = (Map<String, Object>) o;
            if (java.util.Objects.equals(e.get("prompt_name"), promptName))
                return (List<List<Number>>) e.get("embeddings");
        }
        throw new AssertionError("no encoding for prompt " + promptName);
    }

    @SuppressWarnings("unchecked")
    static String inputs() {
        return ApiTest.texts(((List<String>) expected.get("texts"))
                .stream().map(t -> t.replace("\"", "\\\"")).toList());
    }

    static void same(String what, List<List<Number>> want, JsonArray got) {
        assertEquals(want.size(), got.size(), what);
        for (int i = 0; i < got.size(); i++) {
            JsonArray v = got.get(i).getAsJsonArray();
            double dot = 0, nw = 0, ng = 0, worst = 0;
            for (int k = 0; k < v.size(); k++) {
                double w = want.get(i).get(k).doubleValue(), g = v.get(k).getAsDouble();
                dot += w * g;
                nw += w * w;
                ng += g * g;
                worst = Math.max(worst, Math.abs(w - g));
            }
            assertTrue(dot / Math.sqrt(nw * ng) >= 0.99999, what + " text " + i);
            assertTrue(worst <= 1e-4 * Math.sqrt(nw), what + " text " + i + ": " + worst);
        }
    }

    @Test
    void promptNameSelectsTheModelsPrompt() throws Exception {
        for (String name : List.of("passage", "query")) {
            HttpResponse<String> r = s.post(
                    "/embed", "{\"inputs\":" + inputs() + ",\"truncate\":true,\"prompt_name\":\"" + name + "\"}");
            assertEquals(200, r.statusCode(), r.body());
            same(name, encoding(name), JsonParser.parseString(r.body()).getAsJsonArray());
        }
        HttpResponse<String> r = s.post("/embed", "{\"inputs\":" + inputs() + ",\"truncate\":true}");
        assertEquals(200, r.statusCode(), r.body());
        same(
                "default (query)",
                encoding("query"),
                JsonParser.parseString(r.body()).getAsJsonArray());
    }

    @Test
    void unknownPromptNameIsA400NamingThePrompts() throws Exception {
        HttpResponse<String> r = s.post("/embed", "{\"inputs\":\"hello\",\"prompt_name\":\"summary\"}");
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("summary\\\" is not one of this model's prompts"), r.body());
        assertTrue(r.body().contains("query"), r.body());
    }
}
