package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15.BgeSmallEnV15EmbeddingModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Real pretrained weights: all-MiniLM-L6-v2 (6 layers, mean pooling), bge-small-en-v1.5 (12 layers, CLS pooling) and
 * bge-small-zh (BAAI's Chinese model: a Chinese vocabulary; CLS pooling), normalized, from the fp32 ONNX exports and
 * tokenizers that langchain4j ships (test dependencies). Each is
 * converted to a Hugging Face folder ({@code attn convert}'s path) and embedded through the library. The oracles:
 *
 * <ul>
 *   <li>ONNX Runtime running the same ONNX file on the same token ids: the last hidden state within 1e-4 absolute
 *       (fp32 kernels summing in other orders over 6-12 layers differ by ~1e-6; a wrong weight or mask by 1e-1);
 *   <li>langchain4j's own embedding models ({@code embed(text)}: DJL tokenizer, ONNX Runtime, its pooling): pooled
 *       vectors with cosine >= 0.99999 (langchain4j refuses the empty text, which is compared with ONNX Runtime only).
 * </ul>
 *
 * The texts: 60 mixed sentences (short, long, CJK, Cyrillic, Greek, accents, emoji, URLs, code, curly quotes), an
 * empty text, and one longer than 512 tokens (cut at the model's maximum by both engines).
 *
 * <p>Tagged {@code long} (two real models through three engines, 30 s or more): CI's {@code ./attn test
 * -Plong-tests} runs it; README's {@code ./attn test} keeps the double-reference checks of the same code path
 * ({@code EmbedderTest}, the BertModel layer cases).
 */
@Tag("long")
class RealModelsTest {
    record Model(String name, String onnx, String tokenizer, Pooling pooling, EmbeddingModel langchain4j) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final Engine ENGINE = Engine.open(EngineOptions.defaults().withDevice("cpu"));
    static Path dir;
    static List<String> texts;

    @BeforeAll
    static void setUp() throws IOException {
        dir = Files.createTempDirectory("attn-real-models");
        texts = new ArrayList<>(Files.readAllLines(resource("io/attn/text/mixed.txt"), StandardCharsets.UTF_8));
        texts.add("");
        texts.add("A long document. ".repeat(200) + "Its end.");
    }

    @AfterAll
    static void tearDown() throws IOException {
        ENGINE.close();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    static Stream<Arguments> models() {
        return Stream.of(
                Arguments.of(new Model(
                        "all-MiniLM-L6-v2",
                        "all-minilm-l6-v2.onnx",
                        "all-minilm-l6-v2-tokenizer.json",
                        Pooling.MEAN,
                        new AllMiniLmL6V2EmbeddingModel())),
                Arguments.of(new Model(
                        "bge-small-en-v1.5",
                        "bge-small-en-v1.5.onnx",
                        "bge-small-en-v1.5-tokenizer.json",
                        Pooling.CLS,
                        new BgeSmallEnV15EmbeddingModel())),
                Arguments.of(new Model(
                        "bge-small-zh",
                        "bge-small-zh.onnx",
                        "bge-small-zh-tokenizer.json",
                        Pooling.CLS,
                        new dev.langchain4j.model.embedding.onnx.bgesmallzh.BgeSmallZhEmbeddingModel())));
    }

    static Path resource(String name) throws IOException {
        Path p = dir.resolve(name.substring(name.lastIndexOf('/') + 1));
        if (!Files.exists(p))
            try (InputStream in = RealModelsTest.class.getClassLoader().getResourceAsStream(name)) {
                if (in == null) throw new IllegalStateException(name + " is not on the test class path");
                Files.copy(in, p);
            }
        return p;
    }

    /** The model as a Hugging Face folder, written from the ONNX export as {@code attn convert} writes it. */
    static Path folder(Model m) throws IOException {
        Path out = dir.resolve(m.name());
        if (!Files.exists(out))
            TextModel.read(resource(m.onnx()), resource(m.tokenizer())).writeFolder(out, m.pooling(), true);
        return out;
    }

    @ParameterizedTest
    @MethodSource("models")
    void lastHiddenStateMatchesOnnxRuntimeOnTheSameIds(Model m) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (Embedder e = Embedder.load(ENGINE, folder(m));
                OrtSession ort = env.createSession(resource(m.onnx()).toString())) {
            List<TokenEmbeddings> ours = e.embedTokens(texts);
            double worst = 0;
            for (int i = 0; i < texts.size(); i++) {
                int[] ids = ours.get(i).ids();
                long[] l = new long[ids.length], ones = new long[ids.length], zeros = new long[ids.length];
                for (int j = 0; j < ids.length; j++) {
                    l[j] = ids[j];
                    ones[j] = 1;
                }
                long[] shape = {1, ids.length};
                Map<String, OnnxTensor> in = new HashMap<>();
                in.put("input_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(l), shape));
                in.put("attention_mask", OnnxTensor.createTensor(env, LongBuffer.wrap(ones), shape));
                in.put("token_type_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(zeros), shape));
                try (OrtSession.Result r = ort.run(in)) {
                    float[][] want = ((float[][][]) r.get(0).getValue())[0];
                    float[] got = ours.get(i).hidden().data();
                    int dim = want[0].length;
                    assertEquals(want.length * dim, got.length, "text " + i);
                    for (int t = 0; t < want.length; t++)
                        for (int k = 0; k < dim; k++) worst = Math.max(worst, Math.abs(want[t][k] - got[t * dim + k]));
                } finally {
                    for (OnnxTensor t : in.values()) t.close();
                }
            }
            System.out.printf(
                    "%s: last hidden state, max |attn - ONNX Runtime| = %.3g over %d texts%n", m, worst, texts.size());
            assertTrue(worst <= 1e-4, m + ": max abs difference " + worst);
        }
    }

    @ParameterizedTest
    @MethodSource("models")
    void pooledVectorsMatchLangchain4j(Model m) throws IOException {
        try (Embedder e = Embedder.load(ENGINE, folder(m))) {
            float[][] ours = e.embed(texts);
            double worst = 1;
            for (int i = 0; i < texts.size(); i++) {
                if (texts.get(i).isBlank()) continue; // langchain4j refuses blank texts
                float[] want = m.langchain4j().embed(texts.get(i)).content().vector();
                double cos = cosine(want, ours[i]);
                worst = Math.min(worst, cos);
                assertTrue(cos >= 0.99999, m + " text " + i + ": cosine " + cos + " \"" + texts.get(i) + "\"");
            }
            System.out.printf(
                    "%s: pooled vectors, min cosine with langchain4j = %.8f over %d texts%n", m, worst, texts.size());
        }
    }

    @ParameterizedTest
    @MethodSource("models")
    void theOnnxFileLoadsDirectlyToTheSameVectors(Model m) throws IOException {
        EmbedderOptions o = EmbedderOptions.defaults().withPooling(m.pooling()).withNormalize(true);
        try (Embedder fromFolder = Embedder.load(ENGINE, folder(m));
                Embedder fromOnnx =
                        Embedder.load(ENGINE, resource(m.onnx()), o.withTokenizer(resource(m.tokenizer())))) {
            float[][] a = fromFolder.embed(texts), b = fromOnnx.embed(texts);
            for (int i = 0; i < texts.size(); i++) assertArrayEquals(a[i], b[i], m + " text " + i);
        }
    }

    static double cosine(float[] a, float[] b) {
        double ab = 0, aa = 0, bb = 0;
        for (int k = 0; k < a.length; k++) {
            ab += (double) a[k] * b[k];
            aa += (double) a[k] * a[k];
            bb += (double) b[k] * b[k];
        }
        return ab / Math.sqrt(aa * bb);
    }
}
