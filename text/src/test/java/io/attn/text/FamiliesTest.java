package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every model family against Hugging Face itself: the folders of {@code tests/families/} are seeded random-weight
 * models saved by sentence-transformers 6 with the reference outputs of transformers 5.18 and sentence-transformers
 * 6.0.1 ({@code tools/make_families.py}, see {@code tests/families/README.md}). Texts with accents, CJK, emoji, an empty
 * one and one past the truncation.
 *
 * <p>For each family the engine runs: the token ids equal the Hugging Face tokenizer's; the last hidden state of every
 * real token is within {@value #HIDDEN_BOUND} of transformers' ({@code AutoModel}, fp32; its own fp32-vs-fp64 gap is
 * about 1e-6 at these sizes); the sentence vectors, without a prompt and with each of the model's prompts, are within
 * cosine {@value #COSINE} and {@value #ABS_BOUND} x norm (max abs) of {@code SentenceTransformer.encode}; with default
 * options the embedder gives what {@code encode(texts)} gives (the model's default prompt). Each family the engine does
 * not run yet is refused with one line naming its {@code model_type}.
 */
class FamiliesTest {
    static final double HIDDEN_BOUND = 1e-4, COSINE = 0.99999, ABS_BOUND = 1e-4;
    static final Path ROOT = Path.of("../tests/families");
    /** The families the engine runs; the other folders must be refused by name. */
    static final List<String> RUN = List.of(
            "bert",
            "xlm-roberta",
            "distilbert",
            "mpnet",
            "gte",
            "gte-ntk",
            "jina-bert",
            "nomic_bert",
            "modernbert",
            "qwen3",
            "qwen2",
            "mistral",
            "llama",
            "llama3",
            "qwen3-window",
            "bert-dense",
            "gemma3",
            "jina-v3",
            "jina-bert-code");

    /** Folders of a family the engine reads but refuses for a setting it does not run yet, with the line it says. */
    static final Map<String, String> REFUSED = Map.of();

    static Engine engine;

    @BeforeAll
    static void open() {
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static List<String> folders() throws Exception {
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(ROOT)) {
            for (Path p : s.sorted().toList())
                if (Files.exists(p.resolve("expected.json")))
                    out.add(p.getFileName().toString());
        }
        assertTrue(out.containsAll(RUN), "fixtures missing: " + out);
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> expected(String family) {
        return (Map<String, Object>) Json.read(ROOT.resolve(family).resolve("expected.json"));
    }

    @TestFactory
    Stream<DynamicTest> tokensAndHiddenStatesMatchTransformers() throws Exception {
        return RUN.stream()
                .map(f -> DynamicTest.dynamicTest(f, () -> {
                    Map<String, Object> x = expected(f);
                    List<String> texts = strings(x.get("texts"));
                    Map<String, Object> tokens = map(x.get("tokens"));
                    List<List<Number>> ids = lists(tokens.get("input_ids")), mask = lists(tokens.get("attention_mask"));
                    Tensor hidden = Npy.read(ROOT.resolve(f).resolve("hidden.npy"));
                    int e = hidden.dim(2), len = hidden.dim(1);
                    try (Embedder m = Embedder.load(
                            engine, ROOT.resolve(f), EmbedderOptions.defaults().withPrompt(""))) {
                        List<TokenEmbeddings> got = m.embedTokens(texts);
                        double worst = 0;
                        // the decoders' rows are padded on the left (tokenizer_config's padding_side): their real
                        // tokens are the last n of the row. attn runs each text from position 0 (RoPE depends on
                        // distances only; the script measured the difference: hidden_single_vs_batch_max_abs ~1e-6)
                        boolean left = "left".equals(map(x.get("settings")).get("padding_side"));
                        for (int i = 0; i < texts.size(); i++) {
                            int n = 0;
                            for (int t = 0; t < len; t++)
                                n += mask.get(i).get(t).intValue();
                            int first = left ? len - n : 0;
                            int[] want = new int[n];
                            for (int t = 0; t < n; t++) {
                                assertEquals(1, mask.get(i).get(first + t).intValue(), f + ": mask of text " + i);
                                want[t] = ids.get(i).get(first + t).intValue();
                            }
                            assertArrayEquals(want, got.get(i).ids(), f + ": token ids of text " + i);
                            float[] h = got.get(i).hidden().data();
                            for (int t = 0; t < n; t++)
                                for (int k = 0; k < e; k++)
                                    worst = Math.max(
                                            worst,
                                            Math.abs(h[t * e + k] - hidden.data()[(i * len + first + t) * e + k]));
                        }
                        System.out.printf(
                                "%s: last hidden state max abs error %.2e (bound %.0e)%n", f, worst, HIDDEN_BOUND);
                        assertTrue(worst <= HIDDEN_BOUND, f + ": last hidden state max abs error " + worst);
                    }
                }));
    }

    /**
     * Every family through a padded batch (the path of a backend without ragged batches, such as CUDA; the embedder on
     * the CPU runs ragged ones, MPNet's relative position bias included): each text at the start of its row, the padding
     * after it masked (the decoders' texts moved from the left of their rows, causal attention). Every real token's
     * hidden state within {@value #HIDDEN_BOUND} of transformers' (padded as the fixture's tokenizer pads).
     */
    @TestFactory
    Stream<DynamicTest> everyFamilyMatchesTransformersInAPaddedBatch() {
        return RUN.stream()
                .map(f -> DynamicTest.dynamicTest(f, () -> {
                    boolean left =
                            "left".equals(map(expected(f).get("settings")).get("padding_side"));
                    Map<String, Object> tokens = map(expected(f).get("tokens"));
                    List<List<Number>> ids = lists(tokens.get("input_ids")), mask = lists(tokens.get("attention_mask"));
                    Tensor hidden = Npy.read(ROOT.resolve(f).resolve("hidden.npy"));
                    int b = hidden.dim(0), len = hidden.dim(1), e = hidden.dim(2);
                    float[] in = new float[b * len], pad = new float[b * len];
                    int[] n = new int[b];
                    for (int i = 0; i < b; i++) {
                        for (int t = 0; t < len; t++) n[i] += mask.get(i).get(t).intValue();
                        for (int t = 0; t < len; t++)
                            if (t < n[i])
                                in[i * len + t] = ids.get(i)
                                        .get((left ? len - n[i] : 0) + t)
                                        .floatValue();
                            else pad[i * len + t] = 1f;
                    }
                    TextModel m = TextModel.read(ROOT.resolve(f));
                    try (io.attn.engine.AttnModel am = engine.loadOwned(m.config(), m.weights(), m.source())) {
                        // so the embedder of the test above ran this family's ragged batches
                        assertTrue(am.supportsRaggedBatches(), f + " runs ragged batches on the CPU");
                        float[] h = am.run(io.attn.engine.Request.of(Tensor.of(in, b, len))
                                        .withKeyPaddingMask(Tensor.of(pad, b, len)))
                                .output()
                                .data();
                        double worst = 0;
                        for (int i = 0; i < b; i++)
                            for (int t = 0; t < n[i]; t++)
                                for (int k = 0; k < e; k++)
                                    worst = Math.max(
                                            worst,
                                            Math.abs(h[(i * len + t) * e + k]
                                                    - hidden.data()[(i * len + (left ? len - n[i] : 0) + t) * e + k]));
                        System.out.printf("%s padded batch: last hidden state max abs error %.2e%n", f, worst);
                        assertTrue(worst <= HIDDEN_BOUND, f + ": padded batch, max abs error " + worst);
                    }
                }));
    }

    @TestFactory
    Stream<DynamicTest> sentenceVectorsMatchSentenceTransformers() throws Exception {
        return RUN.stream()
                .map(f -> DynamicTest.dynamicTest(f, () -> {
                    Map<String, Object> x = expected(f);
                    List<String> texts = strings(x.get("texts"));
                    Object dflt = x.get("default_encoding_prompt_name");
                    boolean sawDefault = false;
                    try (Embedder plain = Embedder.load(engine, ROOT.resolve(f));
                            Embedder none = Embedder.load(
                                    engine,
                                    ROOT.resolve(f),
                                    EmbedderOptions.defaults().withPrompt(""))) {
                        for (Object o : (List<?>) x.get("encodings")) {
                            Map<String, Object> enc = map(o);
                            String name = (String) enc.get("prompt_name");
                            List<List<Number>> want = lists(enc.get("embeddings"));
                            String what = f + " prompt " + name;
                            compare(what, want, name == null ? none.embed(texts) : none.embed(texts, name));
                            if (java.util.Objects.equals(name, dflt)) {
                                compare(what + " (the default)", want, plain.embed(texts));
                                sawDefault = true;
                            }
                        }
                    }
                    assertTrue(sawDefault, f + ": no encoding of the default prompt " + dflt);
                }));
    }

    @TestFactory
    Stream<DynamicTest> familiesNotRunYetAreNamed() throws Exception {
        return folders().stream()
                .filter(f -> !RUN.contains(f))
                .map(f -> DynamicTest.dynamicTest(f, () -> {
                    String type = (String) expected(f).get("model_type");
                    AttnException e = assertThrows(AttnException.class, () -> Embedder.load(engine, ROOT.resolve(f))
                            .close());
                    assertEquals(AttnException.Code.BAD_INPUT, e.code(), e.getMessage());
                    if (REFUSED.containsKey(f)) {
                        assertTrue(e.getMessage().contains(REFUSED.get(f)), e.getMessage());
                        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
                        return;
                    }
                    assertTrue(
                            e.getMessage().contains("model_type \"" + type + "\" is not supported (attn runs bert,"),
                            e.getMessage());
                    assertTrue(e.getMessage().contains("config.json"), e.getMessage());
                }));
    }

    static void compare(String what, List<List<Number>> want, float[][] got) {
        assertEquals(want.size(), got.length, what);
        double lowest = 1, worstRel = 0;
        for (int i = 0; i < got.length; i++) {
            assertEquals(want.get(i).size(), got[i].length, what + " text " + i + ": dimension");
            double dot = 0, nw = 0, ng = 0, worst = 0;
            for (int k = 0; k < got[i].length; k++) {
                double w = want.get(i).get(k).doubleValue(), g = got[i][k];
                dot += w * g;
                nw += w * w;
                ng += g * g;
                worst = Math.max(worst, Math.abs(w - g));
            }
            double cos = dot / Math.sqrt(nw * ng);
            assertTrue(cos >= COSINE, what + " text " + i + ": cosine " + cos);
            assertTrue(worst <= ABS_BOUND * Math.sqrt(nw), what + " text " + i + ": max abs error " + worst);
            lowest = Math.min(lowest, cos);
            worstRel = Math.max(worstRel, worst / Math.sqrt(nw));
        }
        System.out.printf("%s: lowest cosine 1 - %.1e, max abs error %.1e x norm%n", what, 1 - lowest, worstRel);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<String> strings(Object o) {
        return (List<String>) o;
    }

    @SuppressWarnings("unchecked")
    static List<List<Number>> lists(Object o) {
        return (List<List<Number>>) o;
    }
}
