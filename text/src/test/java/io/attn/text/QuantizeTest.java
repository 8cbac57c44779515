package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Quantization;
import io.attn.io.Json;
import io.attn.io.SafeTensors;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn quantize}'s arithmetic and folders (issue 37). The judge of the integer weights is ONNX Runtime 1.30's
 * own {@code quantize_dynamic} on the same weights ({@code tests/quantized/bert-ort.safetensors}, made by {@code
 * tools/quantize_judge.py} from {@code tests/families/bert}): every int8 value, scale and zero point equal, per tensor,
 * per channel and with reduce_range. The folders: a quantized (or half-precision) family folder loads and embeds close
 * to the float model, its weights int8 in memory; bad configs and missing scales are named.
 */
class QuantizeTest {
    static final Path FAMILIES = Path.of("../tests/families");
    static final Path ORT = Path.of("../tests/quantized/bert-ort.safetensors");
    static final List<String> TEXTS = List.of(
            "The quick brown fox jumps over the lazy dog.",
            "Café au lait, naïve résumé",
            "東京は日本の首都です。",
            "",
            "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9");

    static Engine engine;

    @BeforeAll
    static void open() {
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    @Test
    void int8WeightsScalesAndZeroPointsAreOnnxRuntimes() {
        Map<String, Tensor> ort = SafeTensors.read(ORT).tensors();
        TextModel m = TextModel.read(FAMILIES.resolve("bert"));
        Map<String, Quantization.Options> variants = Map.of(
                "tensor", new Quantization.Options(false, false),
                "channel", new Quantization.Options(true, false),
                "reduced", new Quantization.Options(false, true));
        for (var v : variants.entrySet()) {
            Map<String, Tensor> ours = m.quantized(v.getValue()).weights();
            int compared = 0;
            for (var e : ort.entrySet()) {
                if (!e.getKey().startsWith(v.getKey() + "/")) continue;
                String name = e.getKey().substring(v.getKey().length() + 1);
                Tensor want = e.getValue(), got = ours.get(name);
                assertTrue(got != null, v.getKey() + ": attn did not quantize " + name);
                boolean table = name.startsWith("embeddings.") && !name.endsWith("_scale");
                assertEquals(want.shape(), got.shape(), v.getKey() + " " + name + " shape");
                float[] w = want.data();
                for (int i = 0; i < w.length; i++) {
                    float g = got.dtype() == DType.I8 ? got.int8()[i] + (table ? 128 : 0) : got.data()[i];
                    if (Float.floatToIntBits(g) != Float.floatToIntBits(w[i]))
                        throw new AssertionError(v.getKey() + " " + name + got.indexString(i) + ": attn " + g
                                + ", ONNX Runtime " + w[i]);
                }
                compared++;
            }
            long int8 = ours.entrySet().stream()
                    .filter(t -> t.getValue().dtype() == DType.I8 && !t.getKey().endsWith("_zero_point"))
                    .count();
            System.out.printf(
                    "%s: %d tensors equal to ONNX Runtime's (%d int8 weights in attn's)%n", v.getKey(), compared, int8);
            assertEquals(int8 * 3, compared, v.getKey() + ": ONNX Runtime quantized other tensors than attn");
            assertEquals(15, int8, v.getKey() + ": 3 tables and 6 projections in each of 2 layers");
        }
    }

    @Test
    void quantizedFoldersLoadInt8AndEmbedCloseToTheFloatModel(@TempDir Path tmp) throws Exception {
        for (String f : FamiliesTest.RUN) { // every family the engine runs
            for (boolean perChannel : new boolean[] {false, true}) {
                Path out = tmp.resolve(f + (perChannel ? "-channel" : "-tensor"));
                TextModel.read(FAMILIES.resolve(f))
                        .quantized(new Quantization.Options(perChannel, false))
                        .writeFolderFrom(FAMILIES.resolve(f), out, DType.F32);
                TextModel q = TextModel.read(out);
                assertFalse(q.int8Tensors().isEmpty(), f + ": no int8 tensor read back");
                assertTrue(Files.exists(out.resolve("tokenizer.json")), f + ": tokenizer.json copied");
                assertTrue(Files.exists(out.resolve("modules.json")), f + ": modules.json copied");
                // a Dense module's weights are the module's, copied as they are (float32), not the transformer's
                assertEquals(
                        TextModel.read(FAMILIES.resolve(f)).dense().size(),
                        q.dense().size(),
                        f + ": Dense");
                double worst = worstCosine(FAMILIES.resolve(f), out);
                System.out.printf(
                        "%s %s: int8 vs float32 worst cosine %.5f%n",
                        f, perChannel ? "per channel" : "per tensor", worst);
                assertTrue(worst >= 0.99, f + ": int8 vs float32 worst cosine " + worst);
            }
        }
    }

    @Test
    void quantizedRerankersKeepTheirHeadFloatAndScoreCloseToFloat32(@TempDir Path tmp) {
        for (String r : List.of("bert-reranker", "xlm-roberta-reranker", "distilbert-reranker")) {
            Path from = Path.of("../tests/rerankers").resolve(r), out = tmp.resolve(r);
            TextModel q = TextModel.read(from).quantized(new Quantization.Options(true, false));
            for (String name : q.int8Tensors())
                assertFalse(name.contains("classifier") || name.contains("pooler"), r + ": " + name + " quantized");
            q.writeFolderFrom(from, out, DType.F32);
            List<String> passages = List.of("the sky is blue", "grass is green", "", "Café au lait, naïve résumé");
            try (Reranker a = Reranker.load(engine, from);
                    Reranker b = Reranker.load(engine, out)) {
                float[] x = a.score("what colour is the sky?", passages, true),
                        y = b.score("what colour is the sky?", passages, true);
                double worst = 0;
                for (int i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i] - y[i]));
                System.out.printf("%s: int8 per channel vs float32 logits, max abs difference %.4f%n", r, worst);
                assertTrue(worst <= 0.05, r + ": logits differ by " + worst);
            }
        }
    }

    @Test
    void halfPrecisionFoldersEmbedAsTheFloatModel(@TempDir Path tmp) throws Exception {
        for (DType d : List.of(DType.F16, DType.BF16)) {
            Path out = tmp.resolve("bert-" + d);
            TextModel.read(FAMILIES.resolve("bert")).writeFolderFrom(FAMILIES.resolve("bert"), out, d);
            Map<String, Tensor> f32 =
                    SafeTensors.read(FAMILIES.resolve("bert/model.safetensors")).tensors();
            String header = new String(
                    Files.readAllBytes(out.resolve("model.safetensors")), 0, 200, StandardCharsets.ISO_8859_1);
            assertTrue(header.contains("\"" + d.name() + "\""), d + ": header " + header);
            for (var e :
                    SafeTensors.read(out.resolve("model.safetensors")).tensors().entrySet()) {
                float[] a = f32.get(e.getKey()).data(), b = e.getValue().data();
                double rel = d == DType.F16 ? 0x1p-11 : 0x1p-8;
                for (int i = 0; i < a.length; i++)
                    assertTrue(Math.abs(a[i] - b[i]) <= rel * Math.abs(a[i]) + 0x1p-24, e.getKey() + " " + i);
            }
            double worst = worstCosine(FAMILIES.resolve("bert"), out);
            System.out.printf("bert %s: vs float32 worst cosine %.6f%n", d, worst);
            assertTrue(worst >= (d == DType.F16 ? 0.9999 : 0.999), d + ": worst cosine " + worst);
        }
    }

    @Test
    void aHalfPrecisionOverflowIsNamed(@TempDir Path tmp) {
        Map<String, Tensor> w = new LinkedHashMap<>();
        w.put("fine", Tensor.of(new float[] {1, 2}, 2));
        w.put("big", Tensor.of(new float[] {1, 2, 3, 70000f}, 2, 2));
        AttnException e = assertThrows(
                AttnException.class, () -> SafeTensors.write(tmp.resolve("x.safetensors"), w, Map.of(), DType.F16));
        assertTrue(
                e.getMessage().contains("'big'")
                        && e.getMessage().contains("70000")
                        && e.getMessage().contains("[1, 1]"),
                e.getMessage());
        assertFalse(Files.exists(tmp.resolve("x.safetensors")));
        SafeTensors.write(tmp.resolve("y.safetensors"), w, Map.of(), DType.BF16); // within bfloat16's range
    }

    @Test
    @SuppressWarnings("unchecked")
    void badQuantizedFoldersAreNamed(@TempDir Path tmp) throws Exception {
        Path good = tmp.resolve("good");
        TextModel.read(FAMILIES.resolve("bert"))
                .quantized(Quantization.Options.DEFAULTS)
                .writeFolderFrom(FAMILIES.resolve("bert"), good, DType.F32);
        // an unknown quant_method
        Path unknown = copy(good, tmp.resolve("unknown"));
        editConfig(unknown, c -> ((Map<String, Object>) c.get(Quantization.CONFIG_KEY)).put("quant_method", "gptq"));
        assertBadInput(unknown, "quantization_config.quant_method is gptq");
        // no quantization_config beside int8 tensors
        Path none = copy(good, tmp.resolve("none"));
        editConfig(none, c -> c.remove(Quantization.CONFIG_KEY));
        assertBadInput(none, "is int8 but config.json has no quantization_config");
        // a missing scale
        Path noScale = copy(good, tmp.resolve("noscale"));
        Map<String, Tensor> w = new LinkedHashMap<>(
                SafeTensors.read(good.resolve("model.safetensors"), true).tensors());
        w.remove("encoder.layer.1.output.dense.weight_scale");
        Files.delete(noScale.resolve("model.safetensors"));
        SafeTensors.write(noScale.resolve("model.safetensors"), w, Map.of(), DType.F32);
        assertBadInput(
                noScale, "'encoder.layer.1.output.dense.weight' has no 'encoder.layer.1.output.dense.weight_scale'");
        // symmetric neither true nor false
        Path sym = copy(good, tmp.resolve("sym"));
        editConfig(sym, c -> ((Map<String, Object>) c.get(Quantization.CONFIG_KEY)).put("symmetric", "yes"));
        assertBadInput(sym, "quantization_config.symmetric is yes: attn reads true or false");
        // quantizing twice, and writing over a folder
        AttnException twice =
                assertThrows(AttnException.class, () -> TextModel.read(good).quantized(Quantization.Options.DEFAULTS));
        assertTrue(twice.getMessage().contains("already has a quantization_config"), twice.getMessage());
        AttnException exists = assertThrows(AttnException.class, () -> TextModel.read(FAMILIES.resolve("bert"))
                .writeFolderFrom(FAMILIES.resolve("bert"), good, DType.F32));
        assertTrue(exists.getMessage().contains("not an empty folder"), exists.getMessage());
    }

    /**
     * Weights that are not symmetric ({@code "symmetric": false}, as an ONNX Runtime export with uint8 weights converts
     * to): the zero points stored beside them are used. The judge: every weight of the symmetric folder shifted by one
     * with its zero point shifted alike leaves each {@code q - zero} unchanged, so the vectors must be bitwise the
     * symmetric folder's; a product that ignored the zero points would be off by one unit per weight.
     */
    @Test
    @SuppressWarnings("unchecked")
    void weightsWithNonZeroZeroPointsUseThem(@TempDir Path tmp) throws Exception {
        for (boolean perChannel : new boolean[] {false, true}) {
            Path a = tmp.resolve("sym-" + perChannel), b = tmp.resolve("shifted-" + perChannel);
            TextModel.read(FAMILIES.resolve("bert"))
                    .quantized(new Quantization.Options(perChannel, false))
                    .writeFolderFrom(FAMILIES.resolve("bert"), a, DType.F32);
            copy(a, b);
            Map<String, Tensor> w = new LinkedHashMap<>(
                    SafeTensors.read(a.resolve("model.safetensors"), true).tensors());
            int shifted = 0;
            for (var e : List.copyOf(w.entrySet())) {
                Tensor zero = w.get(e.getKey() + "_zero_point");
                if (e.getValue().dtype() != DType.I8
                        || zero == null
                        || e.getKey().contains("embeddings")) continue;
                byte[] q = e.getValue().int8().clone(), z = zero.int8().clone();
                for (int i = 0; i < q.length; i++) q[i] = (byte) (q[i] - 1); // symmetric: [-127, 127], room below
                for (int i = 0; i < z.length; i++) z[i] = (byte) (z[i] - 1);
                w.put(e.getKey(), Tensor.ofInt8(q, e.getValue().shape().dims()));
                w.put(e.getKey() + "_zero_point", Tensor.ofInt8(z, zero.shape().dims()));
                shifted++;
            }
            assertEquals(12, shifted, "the bert fixture's projections (2 layers x 6)");
            Files.delete(b.resolve("model.safetensors"));
            SafeTensors.write(b.resolve("model.safetensors"), w, Map.of("format", "pt"), DType.F32);
            editConfig(b, c -> ((Map<String, Object>) c.get(Quantization.CONFIG_KEY)).put("symmetric", false));
            try (Embedder x =
                            Embedder.load(engine, a, EmbedderOptions.defaults().withPrompt(""));
                    Embedder y =
                            Embedder.load(engine, b, EmbedderOptions.defaults().withPrompt(""))) {
                float[][] u = x.embed(TEXTS), v = y.embed(TEXTS);
                for (int i = 0; i < TEXTS.size(); i++)
                    org.junit.jupiter.api.Assertions.assertArrayEquals(u[i], v[i], "text " + i);
            }
        }
    }

    /**
     * {@link Quantization#describe} (what {@code attn convert} writes for an int8 export) reads back how {@code attn
     * quantize} quantized: per channel or not, reduced range or not, symmetric; an int8 tensor outside the model's
     * layout is named.
     */
    @Test
    void describeReadsHowWeightsWereQuantized() {
        TextModel m = TextModel.read(FAMILIES.resolve("bert"));
        for (boolean perChannel : new boolean[] {false, true})
            for (boolean reduce : new boolean[] {false, true}) {
                TextModel q = m.quantized(new Quantization.Options(perChannel, reduce));
                Map<String, Object> cfg = new LinkedHashMap<>(q.config());
                cfg.remove(Quantization.CONFIG_KEY);
                Map<String, Object> d = Quantization.describe(cfg, q.weights(), "bert.onnx");
                String what = "per channel " + perChannel + ", reduce range " + reduce;
                assertEquals(perChannel, d.get("per_channel"), what);
                // a per-tensor scale of 2 absmax / 254 can still leave every value in [-64, 64] only by chance
                if (reduce) assertEquals(true, d.get("reduce_range"), what);
                assertEquals(true, d.get("symmetric"), what);
                assertEquals("bert.onnx", d.get("converted_from"), what);
            }
        TextModel q = m.quantized(Quantization.Options.DEFAULTS);
        Map<String, Tensor> w = new LinkedHashMap<>(q.weights());
        w.put("pooler.extra.weight", Tensor.ofInt8(new byte[] {1, 2}, 1, 2));
        w.put("pooler.extra.weight_scale", Tensor.of(new float[] {1f}, 1));
        w.put("pooler.extra.weight_zero_point", Tensor.ofInt8(new byte[] {0}, 1));
        Map<String, Object> cfg = new LinkedHashMap<>(q.config());
        cfg.remove(Quantization.CONFIG_KEY);
        AttnException e = assertThrows(AttnException.class, () -> Quantization.describe(cfg, w, "bert.onnx"));
        assertTrue(
                e.getMessage().contains("'pooler.extra.weight' is neither a projection nor an embedding table"),
                e.getMessage());
    }

    /** With several projections missing, the error names the first in layer order, the same on every run. */
    @Test
    void aMissingProjectionIsNamedInLayerOrder() {
        TextModel m = TextModel.read(FAMILIES.resolve("bert"));
        Map<String, Tensor> w = new LinkedHashMap<>(m.weights());
        for (String gone : List.of(
                "encoder.layer.1.output.dense.weight",
                "encoder.layer.0.intermediate.dense.weight",
                "encoder.layer.1.attention.self.key.weight")) assertTrue(w.remove(gone) != null, gone);
        AttnException e = assertThrows(
                AttnException.class,
                () -> Quantization.dynamicInt8(m.config(), w, Quantization.Options.DEFAULTS, "bert"));
        assertTrue(
                e.getMessage().contains("missing tensor 'encoder.layer.0.intermediate.dense.weight'"), e.getMessage());
    }

    static void assertBadInput(Path dir, String words) {
        AttnException e = assertThrows(AttnException.class, () -> TextModel.read(dir));
        assertEquals(AttnException.Code.BAD_INPUT, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(words), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @SuppressWarnings("unchecked")
    static void editConfig(Path dir, java.util.function.Consumer<Map<String, Object>> edit) throws Exception {
        Map<String, Object> c = (Map<String, Object>) Json.read(dir.resolve("config.json"));
        c = new LinkedHashMap<>(c);
        c.put(Quantization.CONFIG_KEY, new LinkedHashMap<>((Map<String, Object>) c.get(Quantization.CONFIG_KEY)));
        edit.accept(c);
        Files.writeString(dir.resolve("config.json"), Json.write(c), StandardCharsets.UTF_8);
    }

    static Path copy(Path from, Path to) throws Exception {
        try (var s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else Files.copy(p, t);
            }
        }
        return to;
    }

    static double worstCosine(Path a, Path b) {
        try (Embedder x = Embedder.load(engine, a, EmbedderOptions.defaults().withPrompt(""));
                Embedder y = Embedder.load(engine, b, EmbedderOptions.defaults().withPrompt(""))) {
            float[][] u = x.embed(TEXTS), v = y.embed(TEXTS);
            double worst = 1;
            for (int i = 0; i < u.length; i++) worst = Math.min(worst, cosine(u[i], v[i]));
            return worst;
        }
    }

    static double cosine(float[] a, float[] b) {
        double d = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            d += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return d / Math.sqrt(na * nb);
    }
}
