package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cuda.EmulatedCuda;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Precision;
import io.attn.engine.Quantization;
import io.attn.engine.internal.Engines;
import io.attn.tensor.DType;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Quantized models (int8 weights, dynamically quantized activations: {@code QMATMUL}, {@code QEMBEDDING}, issue 37) on
 * the CUDA backend, emulated ({@link EmulatedCuda}: the backend's op logic and {@code quantized.cu} compiled for the
 * host): a family fixture quantized per channel ({@code attn quantize}), its texts embedded in one ragged batch (the
 * default: each sequence's rows one row group of the int8 products, groups of different sizes) and in one padded
 * batch ({@code ragged=off}: equal groups, the padding rows masked), against the CPU backend's vectors (ragged
 * batches; the CPU's int8 arithmetic is judged against ONNX Runtime and the integer reference elsewhere: {@code
 * QuantizedModelsTest}, the parity suite).
 *
 * <p>The judge of the padding: each sequence's activations are quantized with the range of its own rows, so a text
 * embedded in a padded batch gets what it gets alone. With the padding rows in the range (the key-padding mask not
 * given to QMATMUL) the padded batch moved to cosine 0.9999955 (bert) and 0.99996 (qwen3, left-padded) of the CPU's,
 * which the bound below refuses; with the mask it is within 1 - 1.2e-14 (measured when this was written). Tagged
 * {@code long} (the emulator), as the other emulated-CUDA tests.
 */
@Tag("long")
class QuantizedEmulatedCudaTest {
    /** Cosine to the CPU backend's vector, each text: the int products are exact, float rounding elsewhere differs. */
    static final double COSINE = 0.999999;

    @BeforeEach
    void needsEmulator() {
        String why = EmulatedCuda.unavailable();
        Assumptions.assumeTrue(why == null, why);
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"bert,on", "qwen3,on", "bert,off", "qwen3,off"})
    void batchesOnCudaEmbedAsTheCpuDoes(String family, String ragged, @TempDir Path tmp) {
        Path from = QuantizeTest.FAMILIES.resolve(family), q = tmp.resolve(family);
        TextModel.read(from).quantized(new Quantization.Options(true, false)).writeFolderFrom(from, q, DType.F32);
        List<String> texts = QuantizeTest.TEXTS;
        float[][] cpu, cuda;
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                Embedder m = Embedder.load(e, q, EmbedderOptions.defaults().withPrompt(""))) {
            cpu = m.embed(texts);
        }
        try (Engine e = Engines.of(EmulatedCuda.open(Map.of("ragged", ragged), Precision.FP32));
                Embedder m = Embedder.load(e, q, EmbedderOptions.defaults().withPrompt(""))) {
            assertEquals(ragged.equals("on"), m.ragged(), "ragged " + ragged);
            cuda = m.embed(texts);
        }
        double worst = 1;
        for (int i = 0; i < texts.size(); i++) {
            double c = QuantizeTest.cosine(cpu[i], cuda[i]);
            worst = Math.min(worst, c);
            assertTrue(c >= COSINE, family + " text " + i + ": cuda (ragged " + ragged + ") vs cpu cosine " + c);
        }
        System.out.printf(
                "%s int8: emulated cuda, one %s batch, vs cpu: worst cosine 1 - %.2e%n",
                family, ragged.equals("on") ? "ragged" : "padded", 1 - worst);
    }
}
