package io.attn.text;

import java.util.ArrayList;
import java.util.List;

/**
 * What {@code io.attn.text.bench.RerankVsOnnxRuntime} reads of a {@link Reranker}'s package-private state: the token
 * ids and token types of tokenized pairs (to feed ONNX Runtime the same tokens) and the batches attn runs them in.
 * Test scope only.
 */
public final class RerankBenchAccess {
    private RerankBenchAccess() {}

    /** Pair {@code i}'s token ids. */
    public static int[] ids(TokenizedTexts t, int i) {
        return t.tokens[i].ids();
    }

    /** Pair {@code i}'s token type ids (null where the model has none). */
    public static int[] types(TokenizedTexts t, int i) {
        return t.tokens[i].types();
    }

    /**
     * The pairs of each forward pass {@link Reranker#scores} makes of {@code t} with {@link EmbedderOptions#defaults}
     * limits on a device with ragged batches (the CPU): runs of consecutive pairs, input order; the token budget is the
     * default's for models of up to 4096 positions (the benchmarks' cross-encoders have 512; past 4096 the default
     * grows to the max length: {@link EmbedderOptions#batchTokensFor}).
     */
    public static List<int[]> raggedBatches(TokenizedTexts t) {
        List<int[]> out = new ArrayList<>();
        for (int[] b : Embedder.raggedPlan(
                        t.tokens,
                        Math.max(EmbedderOptions.DEFAULT_BATCH_SIZE, SequenceScorer.MIN_SEQUENCES),
                        EmbedderOptions.DEFAULT_BATCH_TOKENS)
                .batches()) {
            int[] g = new int[b[1] - b[0]];
            for (int k = 0; k < g.length; k++) g[k] = b[0] + k;
            out.add(g);
        }
        return out;
    }
}
