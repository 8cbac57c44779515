package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Quantization;
import io.attn.tensor.DType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 37's goal for {@code attn quantize}: bge-small-en-v1.5 (langchain4j's fp32 ONNX file, made a folder as {@code
 * attn convert} makes it) quantized to int8 per channel embeds the 60 mixed sentences, the empty text and a 400-token
 * document at cosine >= 0.99 to the float32 model's vectors; per tensor (ONNX Runtime's default) it is held to the
 * median ONNX Runtime's own quantization of the model reaches; its weights int8 in memory, <= 0.3x the float model's.
 */
@Tag("long")
class QuantizedBgeTest {
    @Test
    void int8BgeSmallPerChannelIsWithinCosine099OfFloat32(@TempDir Path dir) throws IOException {
        List<String> texts =
                new ArrayList<>(Files.readAllLines(resource(dir, "io/attn/text/mixed.txt"), StandardCharsets.UTF_8));
        texts.add("");
        texts.add("A long document. ".repeat(200) + "Its end.");
        Path f32 = dir.resolve("bge-small-en-v1.5"), q8 = dir.resolve("bge-small-en-v1.5-int8");
        TextModel.read(resource(dir, "bge-small-en-v1.5.onnx"), resource(dir, "bge-small-en-v1.5-tokenizer.json"))
                .writeFolder(f32, Pooling.CLS, true);
        TextModel q = TextModel.read(f32).quantized(Quantization.Options.DEFAULTS);
        q.writeFolderFrom(f32, q8, DType.F32);
        Path perChannel = dir.resolve("bge-small-en-v1.5-int8-channel");
        TextModel.read(f32)
                .quantized(new Quantization.Options(true, false))
                .writeFolderFrom(f32, perChannel, DType.F32);
        long int8 = 0, f = 0, before = 0;
        for (var t : TextModel.read(q8).weights().values())
            if (t.dtype() == DType.I8) int8 += t.size();
            else f += 4L * t.size();
        for (var t : TextModel.read(f32).weights().values()) before += 4L * t.size();
        float[][] a, b, pc;
        try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                Embedder x = Embedder.load(engine, f32);
                Embedder y = Embedder.load(engine, q8);
                Embedder z = Embedder.load(engine, perChannel)) {
            a = x.embed(texts);
            b = y.embed(texts);
            pc = z.embed(texts);
        }
        double[] t = print("int8 per tensor (ONNX Runtime's default)", a, b);
        double[] c = print("int8 per channel", a, pc);
        System.out.printf(
                "bge-small-en-v1.5 int8 weights in memory: %.1f MB int8 + %.1f MB float = %.2fx the float model's %.1f"
                        + " MB%n",
                int8 / 1e6, f / 1e6, (int8 + f) / (double) before, before / 1e6);
        assertTrue(c[0] >= 0.99, "per channel: worst cosine " + c[0]);
        // per tensor, one scale for a whole matrix: ONNX Runtime's own quantize_dynamic of this model's .onnx is at
        // median 0.980, worst 0.895 (docs/text.md); attn's is held to that median
        assertTrue(t[t.length / 2] >= 0.975, "per tensor: median cosine " + t[t.length / 2]);
        assertTrue(int8 + f <= 0.3 * before, "weights " + (int8 + f) + " bytes of " + before);
    }

    static double[] print(String what, float[][] a, float[][] b) {
        double[] c = new double[a.length];
        for (int i = 0; i < c.length; i++) c[i] = QuantizeTest.cosine(a[i], b[i]);
        Arrays.sort(c);
        System.out.printf(
                "bge-small-en-v1.5 %s vs float32: cosine median %.5f, worst %.5f over %d texts%n",
                what, c[c.length / 2], c[0], c.length);
        return c;
    }

    static Path resource(Path dir, String name) throws IOException {
        Path p = dir.resolve(name.substring(name.lastIndexOf('/') + 1));
        if (!Files.exists(p))
            try (InputStream in = QuantizedBgeTest.class.getClassLoader().getResourceAsStream(name)) {
                if (in == null) throw new IllegalStateException(name + " is not on the test class path");
                Files.copy(in, p);
            }
        return p;
    }
}
