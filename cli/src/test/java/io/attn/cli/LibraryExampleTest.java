package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Request;
import io.attn.engine.Result;
import io.attn.engine.Tensors;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** README's "Use as a library" example, verbatim between the markers (checked below), compiled and run. */
class LibraryExampleTest {
    @TempDir
    Path dir;

    @Test
    void readmeExampleRuns() throws Exception {
        SafeTensors.write(
                dir.resolve("enc.safetensors"),
                RandomStateDicts.encoderLayer(LayerConfig.of(16, 4, 32), 1),
                Map.of(
                        "config",
                        "{\"module\":\"TransformerEncoderLayer\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32}"));
        Tensor y, w;
        // ---- README example (with the file path made absolute)
        try (Engine engine = Engine.open(
                        EngineOptions.defaults().withDevice("auto").withThreads(0)); // auto|cpu|cuda, 0 = all cores
                AttnModel model = engine.load(dir.resolve("enc.safetensors"))) { // config from the file's metadata
            float[] data = new float[2 * 10 * 16]; // (B, L, E), row-major; FloatBuffer and MemorySegment work too
            y = model.encode(Tensors.of(data, 2, 10, 16)); // (2, 10, 16)
            Result r = model.run(Request.of(data, 2, 10, 16).withAttentionWeights(AttentionWeights.AVERAGED));
            w = r.attentionWeights("self_attn"); // (2, 10, 10), averaged over heads
        }
        // ---- end of example
        assertEquals(Shape.of(2, 10, 16), y.shape());
        assertEquals(Shape.of(2, 10, 10), w.shape());
    }

    /** The README shows the same statements as the test above (modulo the path, assignments and line breaks). */
    @Test
    void readmeShowsThisExample() throws Exception {
        Path readme = Path.of("..", "README.md");
        String text = Files.readString(readme).replaceAll("\\s+", "");
        String src = Files.readString(Path.of("src/test/java/io/attn/cli/LibraryExampleTest.java"));
        String example = src.substring(src.indexOf("// ---- README example"), src.indexOf("// ---- end of example"))
                .replaceAll("\\s+", "");
        String[] mustAppear = {
            "Engine.open(EngineOptions.defaults().withDevice(\"auto\").withThreads(0))",
            "model.encode(Tensors.of(data, 2, 10, 16))",
            "model.run(Request.of(data, 2, 10, 16).withAttentionWeights(AttentionWeights.AVERAGED))",
            "r.attentionWeights(\"self_attn\")"
        };
        for (String s : mustAppear) {
            s = s.replaceAll("\\s+", "");
            assertTrue(example.contains(s), "test lost: " + s);
            assertTrue(text.contains(s), "README lost: " + s);
        }
    }
}
