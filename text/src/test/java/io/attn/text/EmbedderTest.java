package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.RefBert;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The embedder on a small random BERT with the real all-MiniLM-L6-v2 tokenizer, against the double-precision
 * reference ({@link RefBert}, each text alone, unpadded) and sentence-transformers' pooling computed here in double.
 * Bound: relative error {@code ||engine - ref|| / ||ref|| <= 1e-5} per text (fp32 kernels on 2 layers of width 32 give
 * ~1e-7; a wrong mask, position, pooling row or normalization gives 1e-2 or more).
 */
class EmbedderTest {
    static final double BOUND = 1e-5;
    static final List<String> TEXTS = List.of(
            "the sky is blue",
            "",
            "What colour is the sky? Café, naïve, São Paulo.",
            "東京は日本の首都です。",
            "🚀 launch https://example.com/a?b=1 `for (int i = 0; i < n; i++) sum += a[i];`",
            "a much longer text that runs past the maximum length of sixty-four tokens, so it is cut: "
                    + "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
                    + " sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four"
                    + " twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty thirty-one thirty-two");

    @TempDir
    static Path dir;

    static Map<String, Tensor> weights;
    static Engine engine;
    static HuggingFaceTokenizer djl;

    @BeforeAll
    static void setUp() throws Exception {
        weights = TinyBert.weights(7);
        TinyBert.folder(dir.resolve("tiny"), weights);
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
        djl = HuggingFaceTokenizer.newInstance(
                dir.resolve("tiny/tokenizer.json"),
                Map.of("padding", "false", "truncation", "true", "maxLength", String.valueOf(TinyBert.MAX_POS)));
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        djl.close();
    }

    static int[] ids(String text) {
        long[] l = djl.encode(text).getIds();
        int[] a = new int[l.length];
        for (int i = 0; i < a.length; i++) a[i] = (int) l[i];
        return a;
    }

    static DTensor reference(String text) {
        int[] ids = ids(text);
        return RefBert.lastHiddenState(weights, ids, ids.length, TinyBert.LAYERS, TinyBert.HEADS, 1e-12, "gelu");
    }

    /** sentence-transformers' pooling and normalization, in double. */
    static double[] pool(DTensor h, Pooling p, boolean normalize) {
        int len = h.dim(0), e = h.dim(1);
        double[] v = new double[e];
        // sentence-transformers' Pooling on one text: mean, its sum over sqrt(len) (mean_sqrt_len_tokens), the mean
        // weighted by position 1, 2, ... (weightedmean: sum (t + 1) x_t / sum (t + 1)), max, the first token
        for (int k = 0; k < e; k++) {
            double acc = p == Pooling.MAX ? Double.NEGATIVE_INFINITY : 0, weights = 0;
            for (int t = 0; t < (p == Pooling.CLS ? 1 : len); t++) {
                double x = h.data()[t * e + k], w = p == Pooling.WEIGHTED_MEAN ? t + 1 : 1;
                acc = p == Pooling.MAX ? Math.max(acc, x) : acc + w * x;
                weights += w;
            }
            v[k] = switch (p) {
                case MEAN, WEIGHTED_MEAN -> acc / weights;
                case MEAN_SQRT_LEN -> acc / Math.sqrt(len);
                default -> acc;
            };
        }
        if (normalize) {
            double n = 0;
            for (double x : v) n += x * x;
            n = Math.max(Math.sqrt(n), 1e-12);
            for (int k = 0; k < e; k++) v[k] /= n;
        }
        return v;
    }

    static double relErr(float[] got, double[] want) {
        double num = 0, den = 0;
        for (int i = 0; i < want.length; i++) {
            num += (got[i] - want[i]) * (got[i] - want[i]);
            den += want[i] * want[i];
        }
        return Math.sqrt(num / den);
    }

    @ParameterizedTest
    @CsvSource({
        "mean,false",
        "mean,true",
        "cls,true",
        "max,false",
        "mean_sqrt_len_tokens,false",
        "weightedmean,false",
        "weightedmean,true"
    })
    void pooledVectorsMatchTheReference(String pooling, boolean normalize) throws Exception {
        Path folder = dir.resolve("st-" + pooling + normalize);
        TinyBert.folder(folder, weights);
        TinyBert.sentenceTransformers(folder, pooling, normalize, 0);
        Pooling p = Pooling.parse(pooling);
        try (Embedder m = Embedder.load(engine, folder)) {
            assertEquals(p, m.pooling());
            assertEquals(normalize, m.normalize());
            assertEquals(TinyBert.HIDDEN, m.dimension());
            float[][] v = m.embed(TEXTS);
            for (int i = 0; i < TEXTS.size(); i++) {
                double err = relErr(v[i], pool(reference(TEXTS.get(i)), p, normalize));
                assertTrue(err <= BOUND, "text " + i + ": relative error " + err);
            }
        }
    }

    @Test
    void tokenLevelOutputIsTheLastHiddenStateOfEachTextAlone() {
        try (Embedder m = Embedder.load(engine, dir.resolve("tiny"))) {
            List<TokenEmbeddings> out = m.embedTokens(TEXTS);
            for (int i = 0; i < TEXTS.size(); i++) {
                assertArrayEquals(ids(TEXTS.get(i)), out.get(i).ids(), "ids of text " + i);
                DTensor want = reference(TEXTS.get(i));
                assertArrayEquals(want.shape(), out.get(i).hidden().shape().dims());
                double err = relErr(out.get(i).hidden().data(), want.data());
                assertTrue(err <= BOUND, "text " + i + ": relative error " + err);
            }
        }
    }

    @Test
    void withoutSentenceTransformersFilesPoolingIsMeanNotNormalized() {
        try (Embedder m = Embedder.load(engine, dir.resolve("tiny"))) {
            assertEquals(Pooling.MEAN, m.pooling());
            assertFalse(m.normalize());
            assertEquals(TinyBert.MAX_POS, m.maxLength(), "no truncation in tokenizer.json? MiniLM's sets 128");
        }
    }

    @Test
    void truncationFollowsTheTokenizerThenMaxSeqLengthThenPositionsAndTheOverride() throws Exception {
        // the real tokenizer.json sets 128, more than this model's 64 positions: the positions win
        try (Embedder m = Embedder.load(engine, dir.resolve("tiny"))) {
            Embeddings e = m.embedWithUsage(TEXTS);
            assertEquals(64, e.tokens()[5]);
            assertTrue(e.truncated()[5]);
            assertFalse(e.truncated()[0]);
            assertEquals(6, e.tokens()[0]); // [CLS] the sky is blue [SEP]
            assertEquals(2, e.tokens()[1]); // [CLS] [SEP]
        }
        try (Embedder m = Embedder.load(
                engine, dir.resolve("tiny"), EmbedderOptions.defaults().withMaxLength(8))) {
            Embeddings e = m.embedWithUsage(TEXTS);
            assertEquals(8, e.tokens()[2]);
            assertTrue(e.truncated()[2]);
            int[] cut = ids(TEXTS.get(2));
            int[] want = java.util.Arrays.copyOf(cut, 8);
            want[7] = 102; // [SEP] closes the cut text, as Hugging Face truncates
            assertArrayEquals(want, m.embedTokens(List.of(TEXTS.get(2))).get(0).ids());
        }
        AttnException e = assertThrows(
                AttnException.class,
                () -> Embedder.load(
                        engine, dir.resolve("tiny"), EmbedderOptions.defaults().withMaxLength(65)));
        assertTrue(e.getMessage().contains("max_position_embeddings"), e.getMessage());
    }

    /**
     * The maximum length on a model of 1000 positions whose tokenizer.json truncates at 128 (all-MiniLM-L6-v2's file):
     * sentence-transformers' max_seq_length wins (sentence_bert_config.json: 300; sentence-transformers and TEI never
     * read tokenizer.json's truncation: all-MiniLM-L6-v2 embeds 256 tokens there), else tokenizer_config.json's
     * model_max_length (sentence-transformers 6 keeps it there: 200), else the tokenizer's 128 (a bare export, as
     * langchain4j ships it).
     */
    @Test
    void sentenceTransformersMaxSeqLengthWinsOverTheTokenizersTruncation() throws Exception {
        var w = io.attn.reference.layers.RandomStateDicts.bert(
                TinyBert.VOCAB, TinyBert.HIDDEN, TinyBert.LAYERS, TinyBert.FFN, 1000, 2, 11);
        String text = "word ".repeat(400);
        Path bare = TinyBert.folder(dir.resolve("len-bare"), w, 1000);
        Path st = TinyBert.folder(dir.resolve("len-st"), w, 1000);
        TinyBert.sentenceTransformers(st, "mean", false, 300);
        Path st6 = TinyBert.folder(dir.resolve("len-st6"), w, 1000);
        java.nio.file.Files.writeString(st6.resolve("tokenizer_config.json"), "{\"model_max_length\": 200}");
        int[][] cases = {{128}, {300}, {200}};
        Path[] folders = {bare, st, st6};
        for (int i = 0; i < folders.length; i++)
            try (Embedder m = Embedder.load(engine, folders[i])) {
                assertEquals(cases[i][0], m.maxLength(), folders[i].toString());
                Embeddings e = m.embedWithUsage(List.of(text));
                assertEquals(cases[i][0], e.tokens()[0], folders[i].toString());
                assertTrue(e.truncated()[0]);
            }
    }

    @Test
    void theDefaultBatchBudgetGrowsToALongerMaxLength() throws Exception {
        // a model of 5000 positions (ModernBERT and NomicBERT have 8192): by default the budget of 4096 tokens grows to
        // the max length, so that the longest text fits a batch; a budget given below the max length is refused
        Path d = TinyBert.folder(
                dir.resolve("long"),
                io.attn.reference.layers.RandomStateDicts.bert(
                        TinyBert.VOCAB, TinyBert.HIDDEN, TinyBert.LAYERS, TinyBert.FFN, 5000, 2, 11),
                5000);
        String text = "word ".repeat(4600);
        try (Embedder m = Embedder.load(engine, d, EmbedderOptions.defaults().withMaxLength(5000))) {
            Embeddings e = m.embedWithUsage(List.of(text, "short"));
            assertEquals(4602, e.tokens()[0]); // [CLS] 4600 x word [SEP]: longer than 4096
            for (float v : e.vectors()[0]) assertTrue(Float.isFinite(v));
        }
        assertBudgetRefused(() -> Embedder.load(engine, d, TIGHT));
    }

    /** A max length of 5000 with a budget of 4096 given: one long text would not fit. */
    private static final EmbedderOptions TIGHT =
            EmbedderOptions.defaults().withMaxLength(5000).withMaxBatchTokens(4096);

    /** {@code load} with {@link #TIGHT} is refused, naming the budget and the max length. */
    private static void assertBudgetRefused(org.junit.jupiter.api.function.Executable load) {
        AttnException e = assertThrows(AttnException.class, load);
        assertEquals(
                "batch token budget 4096 is below the max length 5000: one long text would not fit a batch",
                e.getMessage());
    }

    @Test
    void aRerankersDefaultBatchBudgetGrowsToALongerMaxLengthToo() throws Exception {
        // the same for a cross-encoder (SequenceScorer): TinyBert's 5000-position encoder with BERT's pooler and a
        // one-label classifier, read as a BertForSequenceClassification
        Map<String, Tensor> w = new java.util.LinkedHashMap<>(io.attn.reference.layers.RandomStateDicts.bert(
                TinyBert.VOCAB, TinyBert.HIDDEN, TinyBert.LAYERS, TinyBert.FFN, 5000, 2, 12));
        java.util.Random rnd = new java.util.Random(5);
        java.util.function.IntFunction<float[]> u = n -> {
            float[] a = new float[n];
            for (int i = 0; i < n; i++) a[i] = rnd.nextFloat() * 0.4f - 0.2f;
            return a;
        };
        int h = TinyBert.HIDDEN;
        w.put("pooler.dense.weight", Tensor.of(u.apply(h * h), h, h));
        w.put("pooler.dense.bias", Tensor.of(u.apply(h), h));
        w.put("classifier.weight", Tensor.of(u.apply(h), 1, h));
        w.put("classifier.bias", Tensor.of(u.apply(1), 1));
        Path d = TinyBert.folder(dir.resolve("long-ce"), w, 5000);
        java.nio.file.Files.writeString(
                d.resolve("config.json"),
                TinyBert.config("gelu", 5000)
                        .replace(
                                "\"BertModel\"]",
                                "\"BertForSequenceClassification\"],\"id2label\":{\"0\":\"LABEL_0\"}"));
        String passage = "word ".repeat(4600);
        try (Reranker r = Reranker.load(engine, d, EmbedderOptions.defaults().withMaxLength(5000))) {
            float[] s = r.score("a query", List.of(passage, "short"));
            assertTrue(Float.isFinite(s[0]) && Float.isFinite(s[1]), java.util.Arrays.toString(s));
        }
        assertBudgetRefused(() -> Reranker.load(engine, d, TIGHT));
    }

    @Test
    void aTextGivesTheSameBitsAloneOrInAnyBatch() {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 40; i++) many.add(TEXTS.get(i % TEXTS.size()) + " " + "word ".repeat(i % 13));
        try (Embedder batched = Embedder.load(engine, dir.resolve("tiny"));
                Embedder small = Embedder.load(
                        engine,
                        dir.resolve("tiny"),
                        EmbedderOptions.defaults().withMaxBatchSize(3).withMaxBatchTokens(100))) {
            float[][] all = batched.embed(many);
            float[][] few = small.embed(many);
            for (int i = 0; i < many.size(); i++) {
                float[] alone = batched.embed(many.get(i));
                assertArrayEquals(alone, all[i], "text " + i + " in one batch");
                assertArrayEquals(alone, few[i], "text " + i + " in small batches");
            }
        }
    }

    @Test
    void concurrentCallsGiveTheResultsOfSequentialOnes() throws Exception {
        try (Embedder m = Embedder.load(engine, dir.resolve("tiny"))) {
            List<List<String>> calls = new ArrayList<>();
            for (int c = 0; c < 16; c++) {
                List<String> t = new ArrayList<>();
                for (int i = 0; i <= c % 5; i++) t.add(TEXTS.get((c + i) % TEXTS.size()) + " #" + c);
                calls.add(t);
            }
            List<float[][]> want = new ArrayList<>();
            for (List<String> t : calls) want.add(m.embed(t));
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<float[][]>> got = new ArrayList<>();
                for (List<String> t : calls) got.add(pool.submit(() -> m.embed(t)));
                for (int c = 0; c < calls.size(); c++)
                    for (int i = 0; i < want.get(c).length; i++)
                        assertArrayEquals(want.get(c)[i], got.get(c).get()[i], "call " + c + " text " + i);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void closeIsIdempotentAndLaterCallsFail() {
        Embedder m = Embedder.load(engine, dir.resolve("tiny"));
        m.close();
        m.close();
        assertTrue(m.isClosed());
        assertThrows(IllegalStateException.class, () -> m.embed("x"));
    }

    @Test
    void badTextsGetOneLineErrors() {
        try (Embedder m = Embedder.load(engine, dir.resolve("tiny"))) {
            List<String> withNull = new ArrayList<>(List.of("a"));
            withNull.add(null);
            assertEquals(
                    "text 1 is null",
                    assertThrows(AttnException.class, () -> m.embed(withNull)).getMessage());
            AttnException e = assertThrows(AttnException.class, () -> m.embed(List.of("ok", "bad \uD800 surrogate")));
            assertEquals(AttnException.Code.BAD_INPUT, e.code());
            assertTrue(e.getMessage().startsWith("text 1 holds an unpaired surrogate"), e.getMessage());
            assertEquals(0, m.embed(List.of()).length);
            assertEquals(TinyBert.HIDDEN, m.embed("\uD83D\uDE80").length); // a surrogate pair is fine
        }
    }
}
