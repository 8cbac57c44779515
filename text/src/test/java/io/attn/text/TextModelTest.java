package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Model folders as users have them: the layouts and tensor names transformers and sentence-transformers write, the
 * dtypes they store, and every way a folder can be broken (one line naming the file and the problem, BAD_INPUT).
 */
class TextModelTest {
    @TempDir
    static Path dir;

    static Map<String, Tensor> weights;
    static Engine engine;
    static float[][] base;
    static final List<String> TEXTS = List.of("the sky is blue", "what colour is the sky?", "");

    @BeforeAll
    static void setUp() throws IOException {
        weights = TinyBert.weights(11);
        TinyBert.folder(dir.resolve("base"), weights);
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
        try (Embedder m = Embedder.load(engine, dir.resolve("base"))) {
            base = m.embed(TEXTS);
        }
    }

    @AfterAll
    static void tearDown() {
        engine.close();
    }

    /** A copy of the base folder with {@code edit} applied to its weights before they are written. */
    static Path variant(String name, String dtype, Consumer<Map<String, Tensor>> edit) throws IOException {
        Path d = dir.resolve(name);
        TinyBert.folder(d, weights);
        Map<String, Tensor> w = new LinkedHashMap<>(weights);
        edit.accept(w);
        Files.delete(d.resolve("model.safetensors"));
        TinyBert.writeSafetensors(d.resolve("model.safetensors"), w, dtype);
        return d;
    }

    static float[][] embed(Path folder) {
        try (Embedder m = Embedder.load(engine, folder)) {
            return m.embed(TEXTS);
        }
    }

    /**
     * DJL loads the CPU build of the tokenizers library that its jar carries, also on a host where it finds CUDA (it
     * would ask for a cuXXX build and try to download it: the first GPU run failed so). The choice is made only for
     * that load: the RUST_FLAVOR property is not left set for the rest of the JVM.
     */
    @Test
    void theTokenizerLoadsItsNativeLibraryWithoutLeavingAFlavorSet() throws IOException {
        assertEquals(TEXTS.size(), base.length); // setUp loaded a tokenizer
        assertEquals(null, System.getProperty(TextTokenizer.FLAVOR));
        try (var dirs = Files.list(ai.djl.util.Utils.getEngineCacheDir("tokenizers"))) {
            assertTrue(
                    dirs.anyMatch(p -> p.getFileName().toString().contains("-cpu-")),
                    "DJL's cache holds the cpu build");
        }
    }

    @Test
    void taskModelNamesPositionIdsAndPoolerAreReadAsBertModel() throws IOException {
        Path d = variant("prefixed", "F32", w -> {
            Map<String, Tensor> p = new LinkedHashMap<>();
            w.forEach((k, v) -> p.put("bert." + k, v));
            p.put("bert.embeddings.position_ids", positionIds());
            p.put("bert.pooler.dense.weight", Tensor.zeros(TinyBert.HIDDEN, TinyBert.HIDDEN));
            p.put("bert.pooler.dense.bias", Tensor.zeros(TinyBert.HIDDEN));
            p.put("cls.predictions.bias", Tensor.zeros(TinyBert.VOCAB));
            w.clear();
            w.putAll(p);
        });
        float[][] got = embed(d);
        for (int i = 0; i < TEXTS.size(); i++) assertArrayEquals(base[i], got[i], "text " + i);
    }

    @Test
    void oldTensorFlowLayerNormNamesAreRead() throws IOException {
        Path d = variant("gamma", "F32", w -> {
            Map<String, Tensor> p = new LinkedHashMap<>();
            w.forEach((k, v) -> p.put(
                    k.contains("LayerNorm.")
                            ? k.replace("LayerNorm.weight", "LayerNorm.gamma")
                                    .replace("LayerNorm.bias", "LayerNorm.beta")
                            : k,
                    v));
            w.clear();
            w.putAll(p);
        });
        float[][] got = embed(d);
        for (int i = 0; i < TEXTS.size(); i++) assertArrayEquals(base[i], got[i], "text " + i);
    }

    @ParameterizedTest
    @ValueSource(strings = {"F16", "BF16"})
    void halfPrecisionWeightsAreWidenedExactly(String dtype) throws IOException {
        Path d = variant("half-" + dtype, dtype, w -> {});
        TextModel m = TextModel.read(d);
        for (var e : weights.entrySet()) {
            float[] want = e.getValue().data().clone();
            for (int i = 0; i < want.length; i++) want[i] = TinyBert.rounded(want[i], dtype);
            assertArrayEquals(want, m.weights().get(e.getKey()).data(), e.getKey());
        }
        float[][] got = embed(d);
        for (int i = 0; i < TEXTS.size(); i++)
            assertTrue(EmbedderTest.relErr(got[i], toDouble(base[i])) < 0.05, dtype + " text " + i);
    }

    @Test
    void shardedWeightsAreReadThroughTheIndex() throws IOException {
        Path d = dir.resolve("sharded");
        TinyBert.folder(d, weights);
        Files.delete(d.resolve("model.safetensors"));
        Map<String, Tensor> a = new LinkedHashMap<>(), b = new LinkedHashMap<>();
        StringBuilder index = new StringBuilder("{\"metadata\":{\"total_size\":0},\"weight_map\":{");
        int i = 0;
        for (var e : weights.entrySet()) {
            boolean first = i++ % 2 == 0;
            (first ? a : b).put(e.getKey(), e.getValue());
            index.append(i == 1 ? "" : ",")
                    .append('"')
                    .append(e.getKey())
                    .append("\":\"model-0000")
                    .append(first ? 1 : 2)
                    .append("-of-00002.safetensors\"");
        }
        TinyBert.writeSafetensors(d.resolve("model-00001-of-00002.safetensors"), a, "F32");
        TinyBert.writeSafetensors(d.resolve("model-00002-of-00002.safetensors"), b, "F32");
        Files.writeString(d.resolve("model.safetensors.index.json"), index.append("}}"));
        float[][] got = embed(d);
        for (int t = 0; t < TEXTS.size(); t++) assertArrayEquals(base[t], got[t], "text " + t);
    }

    @Test
    void sentenceTransformersSettingsAreRead() throws IOException {
        Path d = dir.resolve("st");
        TinyBert.folder(d, weights);
        TinyBert.sentenceTransformers(d, "cls", true, 16);
        TextModel m = TextModel.read(d);
        assertEquals(Pooling.CLS, m.pooling());
        assertTrue(m.normalize());
        // max_seq_length comes first, as in sentence-transformers (tokenizer.json's truncation, 128, is for bare files)
        assertEquals(16, m.maxLength());
    }

    /**
     * An ONNX export's folder (model.onnx and tokenizer.json, Xenova's layout) takes sentence-transformers' length
     * first too: langchain4j's all-MiniLM-L6-v2 file, whose tokenizer.json truncates at 128, then the folder's
     * sentence_bert_config.json (256, the hub model's), then tokenizer_config.json's model_max_length alone.
     */
    @Test
    void anOnnxFolderTakesMaxSeqLengthFirst() throws IOException {
        Path d = dir.resolve("onnx-len");
        Files.createDirectories(d);
        for (String[] f : new String[][] {
            {"all-minilm-l6-v2.onnx", "model.onnx"}, {"all-minilm-l6-v2-tokenizer.json", "tokenizer.json"}
        })
            try (var in = TextModelTest.class.getClassLoader().getResourceAsStream(f[0])) {
                Files.copy(java.util.Objects.requireNonNull(in, f[0]), d.resolve(f[1]));
            }
        assertEquals(128, TextModel.read(d).maxLength());
        Files.writeString(d.resolve("tokenizer_config.json"), "{\"model_max_length\": 300}");
        assertEquals(300, TextModel.read(d).maxLength());
        Files.writeString(d.resolve("sentence_bert_config.json"), "{\"max_seq_length\": 256}");
        assertEquals(256, TextModel.read(d).maxLength());
        Files.writeString(d.resolve("sentence_bert_config.json"), "{\"max_seq_length\": 4096}");
        assertEquals(512, TextModel.read(d).maxLength()); // at most the positions
    }

    @Test
    void maxSeqLengthAppliesWhenTheTokenizerSetsNoTruncation() throws IOException {
        Path d = dir.resolve("seq");
        TinyBert.folder(d, weights);
        TinyBert.sentenceTransformers(d, "mean", false, 16);
        String t = Files.readString(d.resolve("tokenizer.json"));
        int at = t.indexOf("\"truncation\":");
        int end = t.indexOf("},", at) + 1;
        Files.writeString(d.resolve("tokenizer.json"), t.substring(0, at) + "\"truncation\":null" + t.substring(end));
        assertEquals(16, TextModel.read(d).maxLength());
        Files.delete(d.resolve("sentence_bert_config.json"));
        assertEquals(TinyBert.MAX_POS, TextModel.read(d).maxLength());
    }

    @Test
    void writtenFolderReadsBackTheSame() throws IOException {
        TextModel m = TextModel.read(dir.resolve("base"));
        Path out = dir.resolve("written");
        m.writeFolder(out, Pooling.MAX, true);
        TextModel back = TextModel.read(out);
        assertEquals(Pooling.MAX, back.pooling());
        assertTrue(back.normalize());
        assertEquals(m.config(), back.config());
        for (var e : m.weights().entrySet())
            assertArrayEquals(
                    e.getValue().data(), back.weights().get(e.getKey()).data(), e.getKey());
        AttnException e = assertThrows(AttnException.class, () -> m.writeFolder(out, Pooling.MEAN, false));
        assertTrue(e.getMessage().contains("exists and is not an empty folder"), e.getMessage());
        assertFalse(Files.list(dir).anyMatch(p -> p.getFileName().toString().startsWith(".written.tmp")));
    }

    // ------------------------------------------------------------------------------------------------- bad input

    static void bad(Path model, String... expected) {
        AttnException e = assertThrows(AttnException.class, () -> {
            try (Embedder ignored = Embedder.load(engine, model)) {
                // loading must fail
            }
        });
        assertTrue(
                e.code() == AttnException.Code.BAD_INPUT || e.code() == AttnException.Code.SHAPE_MISMATCH,
                e.code() + ": " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        for (String s : expected) assertTrue(e.getMessage().contains(s), e.getMessage() + " lacks " + s);
    }

    static Path copyOfBase(String name) throws IOException {
        Path d = dir.resolve(name);
        TinyBert.folder(d, weights);
        return d;
    }

    /**
     * jina-embeddings-v2-base-code's weights under a config whose {@code _name_or_path} (what tells the two JinaBERT
     * architectures apart, as text-embeddings-inference reads it) was changed, as a fine-tune's save changes it: one
     * line saying what to set.
     */
    @Test
    void jinaCodeWeightsUnderAnotherNameSayWhatToSet() throws IOException {
        Path src = Path.of("../tests/families/jina-bert-code"), d = dir.resolve("jina-code-renamed");
        Files.createDirectories(d);
        try (var s = Files.walk(src)) {
            for (Path p : s.toList()) {
                Path q = d.resolve(src.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(q);
                else Files.copy(p, q, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.writeString(
                d.resolve("config.json"),
                Files.readString(d.resolve("config.json"))
                        .replace("\"jinaai/jina-bert-v2-qk-post-norm\",", "\"my-org/code-search-v2\","));
        bad(d, "model.safetensors", "jina-bert-v2-qk-post-norm's", "_name_or_path", "set it so");
    }

    @Test
    void brokenFoldersGetOneLineNamingTheFile() throws IOException {
        bad(dir.resolve("nowhere"), "nowhere", "no such file or directory");
        Path d = copyOfBase("no-config");
        Files.delete(d.resolve("config.json"));
        bad(d, "no-config", "no config.json");

        // no config.json but two .onnx files: which one is meant cannot be guessed
        d = dir.resolve("two-onnx");
        Files.createDirectories(d);
        Files.writeString(d.resolve("a.onnx"), "x");
        Files.writeString(d.resolve("b.onnx"), "x");
        bad(d, "two-onnx", "no config.json, and 2 .onnx files (a.onnx, b.onnx): name the one to run");

        d = copyOfBase("bad-json");
        Files.writeString(d.resolve("config.json"), "{\"model_type\": \"bert\",");
        bad(d, "config.json", "invalid JSON at line 1");

        d = copyOfBase("no-model-type"); // neither a Hugging Face config nor one of attn's own: say what was looked for
        Files.writeString(d.resolve("config.json"), TinyBert.config("gelu").replace("\"model_type\"", "\"kind\""));
        bad(d, "config.json", "not a model config: no \"model_type\" (a Hugging Face config.json; attn runs bert,");

        d = copyOfBase("gpt2");
        Files.writeString(d.resolve("config.json"), TinyBert.config("gelu").replace("\"bert\"", "\"gpt2\""));
        bad(
                d,
                "config.json",
                "model_type \"gpt2\" is not supported (attn runs bert, xlm-roberta, roberta, camembert,"
                        + " distilbert, mpnet, gte, new, nomic_bert, modernbert, jina_embeddings_v3, qwen3, qwen2, mistral, llama,"
                        + " gemma3_text)");

        d = copyOfBase("remote-code");
        Files.writeString(
                d.resolve("config.json"),
                TinyBert.config("gelu")
                        .replace("\"bert\"", "\"my_bert\"")
                        .replaceFirst("\\{", "{\"auto_map\": {\"AutoModel\": \"modeling.MyBert\"}, "));
        bad(d, "config.json", "model_type \"my_bert\" comes with its own Python code (auto_map)", "no remote code");

        d = copyOfBase("sentencepiece");
        Files.move(d.resolve("tokenizer.json"), d.resolve("sentencepiece.bpe.model"));
        bad(d, "sentencepiece.bpe.model", "tokenizer.json", "convert");

        d = copyOfBase("wrong-type");
        Files.writeString(
                d.resolve("config.json"),
                TinyBert.config("gelu").replace("\"hidden_size\":32", "\"hidden_size\":\"32\""));
        bad(d, "config.json", "\"hidden_size\" must be an integer");

        d = copyOfBase("act");
        Files.writeString(d.resolve("config.json"), TinyBert.config("swish"));
        bad(d, "hidden_act \"swish\" is not supported");

        d = copyOfBase("no-tokenizer");
        Files.delete(d.resolve("tokenizer.json"));
        bad(d, "no tokenizer.json");

        d = copyOfBase("bad-tokenizer");
        Files.writeString(d.resolve("tokenizer.json"), "{\"version\":\"1.0\",\"model\":{\"type\":\"Nope\"}}");
        bad(d, "tokenizer.json", "not a Hugging Face tokenizer.json");

        d = copyOfBase("pickle");
        Files.move(d.resolve("model.safetensors"), d.resolve("pytorch_model.bin"));
        bad(d, "pytorch_model.bin", "safetensors");

        d = copyOfBase("truncated");
        byte[] st = Files.readAllBytes(d.resolve("model.safetensors"));
        Files.write(d.resolve("model.safetensors"), java.util.Arrays.copyOf(st, st.length / 2));
        bad(d, "model.safetensors");
    }

    @Test
    void weightsThatDoNotFitTheConfigAreNamed() throws IOException {
        bad(
                variant("missing", "F32", w -> w.remove("encoder.layer.1.output.dense.bias")),
                "missing tensor 'encoder.layer.1.output.dense.bias'");
        bad(
                variant("shape", "F32", w -> w.put("encoder.layer.0.intermediate.dense.weight", Tensor.zeros(3, 3))),
                "encoder.layer.0.intermediate.dense.weight",
                "has shape (3, 3)");
        bad(
                variant("extra", "F32", w -> w.put("encoder.layer.2.output.dense.bias", Tensor.zeros(32))),
                "encoder.layer.2.output.dense.bias");
    }

    @Test
    void unsupportedSentenceTransformersModulesAreNamed() throws IOException {
        Path d = copyOfBase("word-weights");
        TinyBert.sentenceTransformers(d, "mean", false, 0);
        Files.writeString(
                d.resolve("modules.json"),
                "[{\"idx\":0,\"name\":\"0\",\"path\":\"\","
                        + "\"type\":\"sentence_transformers.models.Transformer\"},{\"idx\":1,\"name\":\"1\",\"path\":\"1_WordWeights\","
                        + "\"type\":\"sentence_transformers.models.WordWeights\"}]");
        bad(d, "modules.json", "sentence_transformers.models.WordWeights", "not supported", "Dense");

        d = copyOfBase("two-modes");
        TinyBert.sentenceTransformers(d, "mean", false, 0);
        Files.writeString(
                d.resolve("1_Pooling/config.json"),
                "{\"pooling_mode_cls_token\":true,\"pooling_mode_mean_tokens\":true}");
        bad(d, "1_Pooling", "exactly one pooling mode must be on", "found 2");

        d = copyOfBase("list-of-modes");
        TinyBert.sentenceTransformers(d, "mean", false, 0);
        Files.writeString(d.resolve("1_Pooling/config.json"), "{\"pooling_mode\":[\"mean\",\"max\"]}");
        bad(d, "1_Pooling", "\"pooling_mode\" must be one mode's name");

        d = copyOfBase("unknown-mode");
        TinyBert.sentenceTransformers(d, "mean", false, 0);
        Files.writeString(d.resolve("1_Pooling/config.json"), "{\"pooling_mode\":\"median\"}");
        bad(d, "1_Pooling", "pooling \"median\" is not one of mean, cls, max");

        d = copyOfBase("escape");
        TinyBert.sentenceTransformers(d, "mean", false, 0);
        Files.writeString(
                d.resolve("modules.json"),
                "[{\"idx\":1,\"name\":\"1\",\"path\":\"../../etc\","
                        + "\"type\":\"sentence_transformers.models.Pooling\"}]");
        bad(d, "modules.json", "leaves the model folder");
    }

    /** A copy of {@code tests/families/bert-dense} (Pooling, two Dense modules, Normalize) with {@code edit} applied. */
    static Path denseCopy(String name, Consumer<Path> edit) throws IOException {
        Path from = Path.of("../tests/families/bert-dense"), to = dir.resolve(name);
        try (var files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) Files.createDirectories(t);
                else Files.copy(f, t);
            }
        }
        edit.accept(to);
        return to;
    }

    /** Writes {@code modules.json} with the modules {@code "Type:path"} in order (sentence-transformers 6's names). */
    static void modules(Path d, String... modules) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < modules.length; i++) {
            String[] tp = modules[i].split(":", -1);
            b.append(i == 0 ? "" : ",")
                    .append("{\"idx\":")
                    .append(i)
                    .append(",\"name\":\"")
                    .append(i)
                    .append("\",\"path\":\"")
                    .append(tp[1])
                    .append("\",\"type\":\"sentence_transformers.base.modules.")
                    .append(tp[0].toLowerCase(java.util.Locale.ROOT))
                    .append('.')
                    .append(tp[0])
                    .append("\"}");
        }
        try {
            Files.writeString(d.resolve("modules.json"), b.append(']').toString());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static void replaceIn(Path file, String from, String to) {
        try {
            String s = Files.readString(file);
            assertTrue(s.contains(from), file + " lacks " + from);
            Files.writeString(file, s.replace(from, to));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void denseModulesAttnCannotRunAreNamed() throws IOException {
        // the fixture as written loads (FamiliesTest compares its vectors with sentence-transformers')
        try (Embedder m = Embedder.load(engine, denseCopy("dense-good", d -> {}))) {
            assertEquals(16, m.dimension());
            assertTrue(
                    m.description().contains("dense 32 -> 24, bias, tanh, dense 24 -> 16, identity, residual"),
                    m.description());
        }
        // module order: Dense between Pooling and Normalize
        bad(
                denseCopy("dense-first", d -> modules(d, "Transformer:", "Dense:2_Dense", "Pooling:1_Pooling")),
                "modules.json",
                "Dense module \"2_Dense\" comes before Pooling");
        bad(
                denseCopy(
                        "dense-after-normalize",
                        d -> modules(d, "Transformer:", "Pooling:1_Pooling", "Normalize:4_Normalize", "Dense:2_Dense")),
                "modules.json",
                "Dense module \"2_Dense\" comes after Normalize");
        // widths: the second Dense alone after the pooling takes 24 values, the model gives 32
        bad(
                denseCopy("dense-width", d -> modules(d, "Transformer:", "Pooling:1_Pooling", "Dense:3_Dense")),
                "3_Dense/config.json",
                "in_features 24 does not match the model's hidden_size 32");
        bad(
                denseCopy(
                        "dense-twice",
                        d -> modules(d, "Transformer:", "Pooling:1_Pooling", "Dense:2_Dense", "Dense:2_Dense")),
                "2_Dense/config.json",
                "in_features 32 does not match the previous Dense module's out_features 24");
        bad(
                denseCopy(
                        "dense-act",
                        d -> replaceIn(d.resolve("2_Dense/config.json"), "activation.Tanh", "activation.GELU")),
                "2_Dense/config.json",
                "activation_function \"torch.nn.modules.activation.GELU\" is not one attn applies",
                "torch.nn.modules.activation.Tanh");
        bad(
                denseCopy(
                        "dense-tokens",
                        d -> replaceIn(
                                d.resolve("2_Dense/config.json"),
                                "\"module_input_name\": \"sentence_embedding\"",
                                "\"module_input_name\": \"token_embeddings\"")),
                "2_Dense/config.json",
                "module_input_name \"token_embeddings\"",
                "sentence embedding only");
        bad(
                denseCopy(
                        "dense-shape",
                        d -> replaceIn(
                                d.resolve("2_Dense/config.json"), "\"out_features\": 24", "\"out_features\": 25")),
                "2_Dense/model.safetensors",
                "tensor \"linear.weight\" is (24, 32) F32, expected (25, 32)");
        bad(
                denseCopy(
                        "dense-bias",
                        d -> replaceIn(d.resolve("2_Dense/config.json"), "\"bias\": true", "\"bias\": false")),
                "2_Dense/model.safetensors",
                "holds linear.bias but config.json says \"bias\": false");
        bad(
                denseCopy("dense-pickle", d -> {
                    try {
                        Files.move(d.resolve("2_Dense/model.safetensors"), d.resolve("2_Dense/pytorch_model.bin"));
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }),
                "2_Dense",
                "holds only pytorch_model.bin");
    }

    private static Tensor positionIds() {
        float[] p = new float[TinyBert.MAX_POS];
        for (int i = 0; i < p.length; i++) p[i] = i;
        return Tensor.of(p, 1, TinyBert.MAX_POS);
    }

    private static double[] toDouble(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return d;
    }
}
