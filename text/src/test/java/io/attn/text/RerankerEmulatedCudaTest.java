package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.cuda.EmulatedCuda;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every reranker and classifier of {@link RerankerTest} on the CUDA backend: its real op logic launching the engine's
 * {@code .cu} kernels compiled for the host ({@link EmulatedCuda}, fp32), so the classification heads (BERT's pooler,
 * GTE's and NomicBERT's pooler, ModernBERT's dense + GELU + LayerNorm head on the first token or on the mean of the
 * tokens) run there too, held to the same judges and bounds: sentence-transformers' {@code CrossEncoder.predict} and
 * {@code rank} order. One padded batch per reranker: the CPU
 * test's runs alone, in twos and left-truncated are about the host's batching and tokenizer, not the backend, and
 * take the emulator minutes each. Says nothing about cuBLAS, PTX or timing (a GPU run does). Tagged {@code long} (the
 * host build of the kernels): CI's second test run takes it.
 */
@Tag("long")
class RerankerEmulatedCudaTest extends RerankerTest {
    @BeforeAll
    static void open() {
        engine = EmulatedEngines.openOrSkip();
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    // The 3-label classifier's head is BERT's pooler + classifier, which bert-reranker runs here already; its two tests
    // (single texts and pairs: the host's tokenization, 30 s on the emulator) are not tests here (overridden without
    // @Test).

    @Override
    void classifierMatchesTransformers() {}

    @Override
    void classifierPairsMatchTransformers() {}

    /** As on the CPU: the mean-pooling head takes padded batches only, the first-token head ragged ones too. */
    @Override
    @Test
    void aMeanPoolingHeadTakesNoRaggedBatch() {
        for (String name : List.of("modernbert-reranker", "modernbert-cls-reranker")) {
            TextModel t = TextModel.read(ROOT.resolve(name));
            try (io.attn.engine.AttnModel m = engine.loadOwned(t.config(), t.weights(), t.source())) {
                assertEquals(name.equals("modernbert-cls-reranker"), m.supportsRaggedBatches(), name);
            }
        }
    }

    /** One padded batch of the fixture's pairs: logits, scores and the ranking against sentence-transformers'. */
    @Override
    void check(String name, boolean types, int... leftDiffers) {
        Map<String, Object> x = expected(name);
        List<List<String>> pairs = list(x.get("pairs"));
        List<String> first = new ArrayList<>(), second = new ArrayList<>();
        for (List<String> p : pairs) {
            first.add(p.get(0));
            second.add(p.get(1));
        }
        try (Reranker r = Reranker.load(engine, ROOT.resolve(name))) {
            TokenizedTexts t = r.scorer().tokenizePairs(first, second);
            float[][] logits = r.logits(t);
            List<List<Number>> want = list(x.get("logits"));
            float[] raw = new float[logits.length], sig = new float[logits.length];
            for (int i = 0; i < logits.length; i++) {
                raw[i] = logits[i][0];
                sig[i] = (float) (1 / (1 + Math.exp(-(double) raw[i])));
            }
            double[] wantRaw = new double[want.size()];
            for (int i = 0; i < wantRaw.length; i++)
                wantRaw[i] = want.get(i).get(0).doubleValue();
            close(wantRaw, raw, LOGIT_BOUND, name + " logits on the emulated CUDA backend");
            close(doubles(x.get("scores")), sig, SCORE_BOUND, name + " sigmoid scores on the emulated CUDA backend");
            // CrossEncoder.rank's order of the first five passages, from the same scores
            List<Map<String, Object>> rank = list(x.get("rank"));
            Integer[] order = {0, 1, 2, 3, 4};
            java.util.Arrays.sort(order, (a, b) -> Float.compare(sig[b], sig[a]));
            for (int i = 0; i < rank.size(); i++)
                assertEquals(((Number) rank.get(i).get("corpus_id")).intValue(), order[i], name + " rank " + i);
        }
    }
}
