package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cross-encoders and a classifier against Hugging Face: the folders of {@code tests/rerankers/} are seeded random-weight
 * {@code *ForSequenceClassification} models saved by sentence-transformers 6's {@code CrossEncoder} (BERT with token
 * types, XLM-RoBERTa without) and by transformers (a BERT classifier with three labels), with transformers' logits and
 * {@code CrossEncoder.predict}'s scores ({@code tools/make_rerankers.py}). The pairs hold an empty passage, an empty
 * query, CJK, emoji and passages and queries longer than the maximum length (cut longest-first).
 *
 * <p>Bounds: token ids and types equal; sigmoid scores within {@value #SCORE_BOUND} of {@code CrossEncoder.predict};
 * raw logits within {@value #LOGIT_BOUND} of transformers' and of {@code predict(activation_fn=Identity)}; the ranking
 * identical to {@code CrossEncoder.rank}; the classifier's softmax within {@value #SCORE_BOUND}. Each pair's score is
 * bitwise the same alone, in the whole batch, in batches of two, and padded instead of ragged.
 */
class RerankerTest {
    static final double SCORE_BOUND = 2e-6, LOGIT_BOUND = 2e-5;
    static final Path ROOT = Path.of("../tests/rerankers");
    static Engine engine;

    @BeforeAll
    static void open() {
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> expected(String name) {
        return (Map<String, Object>) Json.read(ROOT.resolve(name).resolve("expected.json"));
    }

    @SuppressWarnings("unchecked")
    static <T> List<T> list(Object o) {
        return (List<T>) o;
    }

    static int[] ints(Object o) {
        List<Number> l = list(o);
        return l.stream().mapToInt(Number::intValue).toArray();
    }

    static double[] doubles(Object o) {
        List<Number> l = list(o);
        return l.stream().mapToDouble(Number::doubleValue).toArray();
    }

    static void close(double[] want, float[] got, double bound, String what) {
        assertEquals(want.length, got.length, what);
        double max = 0;
        for (int i = 0; i < want.length; i++) max = Math.max(max, Math.abs(want[i] - got[i]));
        System.out.printf("%s: max abs difference %.2e (bound %.0e)%n", what, max, bound);
        for (int i = 0; i < want.length; i++)
            assertTrue(Math.abs(want[i] - got[i]) <= bound, what + " [" + i + "]: " + got[i] + " vs " + want[i]);
    }

    @Test
    void bertRerankerMatchesCrossEncoder() {
        check("bert-reranker", true);
    }

    @Test
    void xlmRobertaRerankerMatchesCrossEncoder() {
        check("xlm-roberta-reranker", false);
    }

    @Test
    void distilbertRerankerMatchesCrossEncoder() {
        check("distilbert-reranker", false);
    }

    @Test
    void mpnetRerankerMatchesCrossEncoder() {
        check("mpnet-reranker", false); // ragged batches with MPNet's relative position bias (the op's RELATIVE mask)
    }

    @Test
    void gteRerankerMatchesCrossEncoder() {
        check("gte-reranker", false); // transformers' GteForSequenceClassification: weights under "gte."
    }

    @Test
    void nomicBertRerankerMatchesCrossEncoder() {
        check("nomic-bert-reranker", true);
    }

    @Test
    void qwen3RerankerMatchesCrossEncoder() {
        // Qwen3-Reranker's sequence-classification form: a causal decoder, the score read on the last token that is
        // not the pad token (here the token before the appended <|endoftext|>, which is also the pad token)
        check("qwen3-reranker", false);
    }

    @Test
    void modernBertMeanPoolingRerankerMatchesCrossEncoder() {
        check("modernbert-reranker", false, 7); // classifier_pooling mean: padded batches
    }

    @Test
    void aMeanPoolingHeadTakesNoRaggedBatch() {
        // its row sums would start at each sequence's offset in the batch (not bitwise the same alone): the model says
        // it runs padded batches only, and a ragged request is one line naming why; the first-token head takes both
        TextModel mean = TextModel.read(ROOT.resolve("modernbert-reranker"));
        TextModel cls = TextModel.read(ROOT.resolve("modernbert-cls-reranker"));
        try (io.attn.engine.AttnModel m = engine.loadOwned(mean.config(), mean.weights(), mean.source());
                io.attn.engine.AttnModel c = engine.loadOwned(cls.config(), cls.weights(), cls.source())) {
            assertFalse(m.supportsRaggedBatches());
            assertTrue(c.supportsRaggedBatches());
            io.attn.engine.Request ragged = io.attn.engine.Request.of(
                            io.attn.tensor.Tensor.of(new float[] {703, 100, 704, 703, 704}, 1, 5))
                    .withSequenceLengths(3, 2);
            AttnException e = assertThrows(AttnException.class, () -> m.run(ragged));
            assertTrue(e.getMessage().contains("pools by the mean of the tokens"), e.getMessage());
            assertEquals(2, c.run(ragged).output().dim(0)); // the first-token head runs it: a logit per sequence
        }
    }

    @Test
    void modernBertClsRerankerMatchesCrossEncoder() {
        check("modernbert-cls-reranker", false, 7); // classifier_pooling cls, classifier_bias true
    }

    /**
     * {@code leftDiffers}: pairs whose cut on the left tokenizers 0.23 splits otherwise than its documented
     * longest-first rule (which attn follows; tests/rerankers/README.md): for ModernBERT's byte-level BPE and the
     * two long texts of pair 7 it keeps 15 tokens of the first text and 14 of the second, where the rule (and the same
     * library cutting on the right, and BERT's WordPiece cutting on the left) gives 14 and 15. Held to exactly that
     * known difference, so a change on either side fails the test.
     */
    void check(String name, boolean types, int... leftDiffers) {
        Map<String, Object> x = expected(name);
        List<List<String>> pairs = list(x.get("pairs"));
        List<String> first = new ArrayList<>(), second = new ArrayList<>();
        for (List<String> p : pairs) {
            first.add(p.get(0));
            second.add(p.get(1));
        }
        try (Reranker r = Reranker.load(engine, ROOT.resolve(name))) {
            assertEquals(((Number) x.get("max_length")).intValue(), r.maxLength());
            assertEquals("sigmoid", r.activation());
            assertEquals(1, r.numLabels());
            TokenizedTexts t = r.scorer().tokenizePairs(first, second);
            List<Map<String, Object>> items = list(x.get("items"));
            for (int i = 0; i < pairs.size(); i++) {
                assertArrayEquals(ints(items.get(i).get("input_ids")), t.tokens[i].ids(), name + " ids of pair " + i);
                if (types)
                    assertArrayEquals(
                            ints(items.get(i).get("token_type_ids")), t.tokens[i].types(), name + " types " + i);
            }
            float[][] logits = r.logits(t);
            List<List<Number>> want = list(x.get("logits"));
            float[] raw = new float[logits.length];
            for (int i = 0; i < logits.length; i++) {
                raw[i] = logits[i][0];
                assertEquals(want.get(i).get(0).doubleValue(), raw[i], LOGIT_BOUND, name + " logit " + i);
            }
            close(doubles(x.get("raw_scores")), r.scores(t, true), LOGIT_BOUND, name + " raw scores");
            float[] scores = r.scores(t, false);
            close(doubles(x.get("scores")), scores, SCORE_BOUND, name + " sigmoid scores");
            // the ranking of the first five passages for the query, as CrossEncoder.rank gives it
            List<Map<String, Object>> rank = list(x.get("rank"));
            List<Reranker.Ranked> got = r.rank(first.get(0), second.subList(0, 5), 0, false);
            for (int i = 0; i < rank.size(); i++)
                assertEquals(
                        ((Number) rank.get(i).get("corpus_id")).intValue(),
                        got.get(i).index(),
                        name + " rank");
            assertEquals(3, r.rank(first.get(0), second.subList(0, 5), 3, false).size());
            // truncation on the left (TEI's truncation_direction), against truncation_side="left"
            if (x.get("left") instanceof Map<?, ?> left) {
                TokenizedTexts lt = r.scorer().tokenizePairs(first, second, true);
                List<Map<String, Object>> litems = list(left.get("items"));
                java.util.Set<Integer> differ = new java.util.HashSet<>();
                for (int d : leftDiffers) differ.add(d);
                for (int i = 0; i < pairs.size(); i++) {
                    if (differ.contains(i)) {
                        // HF: [CLS] a[-15:] [SEP] b[-14:] [SEP]; attn: [CLS] a[-14:] [SEP] b[-15:] [SEP]
                        int[] hf = ints(litems.get(i).get("input_ids")), ours = lt.tokens[i].ids();
                        int sep = hf.length - 16; // HF's first separator (b keeps 14 tokens, then [SEP])
                        assertEquals(hf.length, ours.length, name + " left " + i);
                        assertEquals(hf[0], ours[0], name + " left " + i);
                        assertArrayEquals(
                                java.util.Arrays.copyOfRange(hf, 2, sep),
                                java.util.Arrays.copyOfRange(ours, 1, sep - 1),
                                name + " left " + i + ": the first text's last tokens");
                        assertEquals(hf[sep], ours[sep - 1], name + " left " + i + ": the separator");
                        assertArrayEquals(
                                java.util.Arrays.copyOfRange(hf, sep + 1, hf.length),
                                java.util.Arrays.copyOfRange(ours, sep + 1, ours.length),
                                name + " left " + i + ": the second text's last tokens");
                        continue;
                    }
                    assertArrayEquals(ints(litems.get(i).get("input_ids")), lt.tokens[i].ids(), name + " left " + i);
                    if (types)
                        assertArrayEquals(
                                ints(litems.get(i).get("token_type_ids")), lt.tokens[i].types(), name + " left " + i);
                }
                double[] wantLeft = doubles(left.get("scores"));
                float[] gotLeft = r.scores(lt, false);
                for (int i = 0; i < wantLeft.length; i++)
                    if (!differ.contains(i)) // (a pair cut otherwise is another input: its score differs)
                    assertEquals(wantLeft[i], gotLeft[i], SCORE_BOUND, name + " left sigmoid score " + i);
            }
            // bitwise the same alone, in twos, and padded
            for (int i = 0; i < pairs.size(); i++) {
                float alone =
                        r.scores(r.scorer().tokenizePairs(List.of(first.get(i)), List.of(second.get(i))), false)[0];
                assertEquals(Float.floatToIntBits(scores[i]), Float.floatToIntBits(alone), name + " alone " + i);
            }
            for (int i = 0; i + 1 < pairs.size(); i += 2) {
                float[] two =
                        r.scores(r.scorer().tokenizePairs(first.subList(i, i + 2), second.subList(i, i + 2)), false);
                assertEquals(Float.floatToIntBits(scores[i]), Float.floatToIntBits(two[0]), name + " in twos " + i);
                assertEquals(Float.floatToIntBits(scores[i + 1]), Float.floatToIntBits(two[1]), name + " twos " + i);
            }
        }
        try (Reranker padded = Reranker.load(engine, ROOT.resolve(name))) {
            padded.scorer().usePaddedBatches();
            float[] p = padded.scores(padded.scorer().tokenizePairs(first, second), false);
            close(doubles(x.get("scores")), p, SCORE_BOUND, name + " padded sigmoid scores");
            float alone = padded.scores(
                            padded.scorer().tokenizePairs(List.of(first.get(4)), List.of(second.get(4))), false)[0];
            assertEquals(Float.floatToIntBits(p[4]), Float.floatToIntBits(alone), name + " padded alone");
        }
    }

    @Test
    void classifierMatchesTransformers() {
        Map<String, Object> x = expected("bert-classifier");
        List<String> texts = list(x.get("texts"));
        try (Classifier c = Classifier.load(engine, ROOT.resolve("bert-classifier"))) {
            assertEquals(List.of("negative", "neutral", "positive"), c.labels());
            assertEquals("softmax", c.activation());
            List<Map<String, Object>> items = list(x.get("items"));
            TokenizedTexts t = c.tokenize(texts);
            for (int i = 0; i < texts.size(); i++)
                assertArrayEquals(ints(items.get(i).get("input_ids")), t.tokens[i].ids(), "ids of text " + i);
            List<Classifier.Prediction> p = c.classify(texts);
            List<List<Number>> logits = list(x.get("logits")), soft = list(x.get("softmax"));
            float[][] l = c.logits(t);
            for (int i = 0; i < texts.size(); i++) {
                close(doubles(logits.get(i)), l[i], LOGIT_BOUND, "logits of text " + i);
                close(doubles(soft.get(i)), p.get(i).scores(), SCORE_BOUND, "softmax of text " + i);
                double[] s = doubles(soft.get(i));
                int best = 0;
                for (int k = 1; k < s.length; k++) if (s[k] > s[best]) best = k;
                assertEquals(c.labels().get(best), p.get(i).label());
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void classifierPairsMatchTransformers() {
        Map<String, Object> x =
                (Map<String, Object>) expected("bert-classifier").get("pairs");
        List<List<String>> pairs = list(x.get("pairs"));
        List<String> first = pairs.stream().map(p -> p.get(0)).toList();
        List<String> second = pairs.stream().map(p -> p.get(1)).toList();
        List<Map<String, Object>> items = list(x.get("items"));
        List<List<Number>> logits = list(x.get("logits")), soft = list(x.get("softmax"));
        try (Classifier c = Classifier.load(engine, ROOT.resolve("bert-classifier"))) {
            TokenizedTexts t = c.tokenizePairs(first, second, false);
            for (int i = 0; i < pairs.size(); i++) {
                assertArrayEquals(ints(items.get(i).get("input_ids")), t.tokens[i].ids(), "ids of pair " + i);
                assertArrayEquals(ints(items.get(i).get("token_type_ids")), t.tokens[i].types(), "types of pair " + i);
            }
            float[][] l = c.logits(t);
            List<Classifier.Prediction> p = c.classifyPairs(first, second);
            for (int i = 0; i < pairs.size(); i++) {
                close(doubles(logits.get(i)), l[i], LOGIT_BOUND, "logits of pair " + i);
                close(doubles(soft.get(i)), p.get(i).scores(), SCORE_BOUND, "softmax of pair " + i);
            }
            // mixed texts and pairs, in order: each as it is alone, bitwise
            List<List<String>> mixed = List.of(List.of("hello"), pairs.get(4), List.of(""), pairs.get(0));
            float[][] m = c.logits(c.tokenizeInputs(mixed, false));
            float[][] hello = c.logits(c.tokenize(List.of("hello", "")));
            assertArrayEquals(hello[0], m[0]);
            assertArrayEquals(l[4], m[1]);
            assertArrayEquals(hello[1], m[2]);
            assertArrayEquals(l[0], m[3]);
            AttnException e = assertThrows(
                    AttnException.class, () -> c.tokenizeInputs(List.of(List.of("a"), List.of("a", "b", "c")), false));
            assertTrue(e.getMessage().contains("input 1"), e.getMessage());
        }
    }

    @Test
    void theWrongKindOfModelIsRefusedByName() {
        AttnException e = assertThrows(AttnException.class, () -> Embedder.load(engine, ROOT.resolve("bert-reranker")));
        assertTrue(e.getMessage().contains("sequence classifier"), e.getMessage());
        e = assertThrows(AttnException.class, () -> Reranker.load(engine, Path.of("../tests/families/bert")));
        assertTrue(e.getMessage().contains("not a sequence classifier"), e.getMessage());
        e = assertThrows(AttnException.class, () -> Reranker.load(engine, ROOT.resolve("bert-classifier")));
        assertTrue(e.getMessage().contains("3 labels") && e.getMessage().contains("not a reranker"), e.getMessage());
    }
}
