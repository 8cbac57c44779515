package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;
import io.attn.engine.Quantization;
import io.attn.io.Json;
import io.attn.tensor.DType;
import io.attn.text.TextModel;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server loads an {@code attn quantize} folder like any other (issue 37): the XLM-RoBERTa fixture of {@code
 * tests/families}, quantized to int8 per channel, served; {@code /embed} with the {@code query} prompt within cosine
 * 0.999 of sentence-transformers' float32 vectors (the text module's QuantizeTest measured 0.9998 for the library).
 */
class QuantizedServeTest {
    static final Path MODEL = Path.of("../tests/families/xlm-roberta");

    @Test
    @SuppressWarnings("unchecked")
    void anInt8FolderServesEmbeddingsCloseToFloat32(@TempDir Path dir) throws Exception {
        Path q = dir.resolve("xlm-roberta-int8");
        TextModel.read(MODEL).quantized(new Quantization.Options(true, false)).writeFolderFrom(MODEL, q, DType.F32);
        PromptsTest.expected = (Map<String, Object>) Json.read(MODEL.resolve("expected.json"));
        try (ServerFixture s = new ServerFixture(q, ServerOptions.defaults(), true)) {
            HttpResponse<String> r = s.post(
                    "/embed", "{\"inputs\":" + PromptsTest.inputs() + ",\"truncate\":true,\"prompt_name\":\"query\"}");
            assertEquals(200, r.statusCode(), r.body());
            JsonArray got = JsonParser.parseString(r.body()).getAsJsonArray();
            List<List<Number>> want = PromptsTest.encoding("query");
            assertEquals(want.size(), got.size());
            double worst = 1;
            for (int i = 0; i < got.size(); i++) {
                JsonArray v = got.get(i).getAsJsonArray();
                double dot = 0, nw = 0, ng = 0;
                for (int k = 0; k < v.size(); k++) {
                    double w = want.get(i).get(k).doubleValue(), g = v.get(k).getAsDouble();
                    dot += w * g;
                    nw += w * w;
                    ng += g * g;
                }
                worst = Math.min(worst, dot / Math.sqrt(nw * ng));
            }
            System.out.printf("served int8 xlm-roberta vs sentence-transformers float32: worst cosine %.5f%n", worst);
            assertTrue(worst >= 0.999, "worst cosine " + worst);
        }
    }
}
