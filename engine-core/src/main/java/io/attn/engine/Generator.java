package io.attn.engine;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.generate.Sampler;
import io.attn.nn.DecoderOnlyLM;
import io.attn.nn.DecoderSession;
import java.util.Arrays;

/**
 * Autoregressive generation with a {@link DecoderOnlyLM} (the loop behind {@link LanguageModel#generate}): a batch of prompts (token ids, of different lengths) is
 * prefilled in one pass, then one token per sequence is sampled and fed back per step, until every sequence has
 * produced {@code eos} or {@code maxNewTokens} tokens.
 *
 * <p>With {@code useCache} each step runs one token against the key/value cache; without it each step recomputes the
 * whole sequence so far (O(L) tokens per step instead of 1: the baseline the cache is measured against). Both give the
 * same tokens up to float rounding.
 */
final class Generator {
    private Generator() {}

    /**
     * Generates from {@code prompts} (each non-empty) on {@code backend}. {@code eos} below 0 never stops early.
     *
     * @throws AttnException BAD_INPUT when a prompt plus {@code maxNewTokens} exceed the model's {@code max_len}
     */
    static Generation generate(
            DecoderOnlyLM lm,
            Backend backend,
            int[][] prompts,
            int maxNewTokens,
            Sampler sampler,
            int eos,
            boolean useCache,
            TokenListener listener) {
        if (maxNewTokens < 0) throw AttnException.badInput("max-new-tokens must be >= 0, got " + maxNewTokens);
        int batch = prompts.length, longest = 0;
        for (int[] p : prompts) longest = Math.max(longest, p.length);
        int maxLen = lm.config().maxLen();
        // the last generated token is never fed back, so it needs no cache row
        int capacity = longest + Math.max(0, maxNewTokens - 1);
        if (capacity > maxLen)
            throw AttnException.badInput("a prompt of " + longest + " tokens plus " + maxNewTokens
                    + " new tokens exceeds the model's max_len of " + maxLen);
        int[][] out = new int[batch][maxNewTokens];
        int[] count = new int[batch];
        boolean[] done = new boolean[batch];
        long t0 = System.nanoTime(), prefill = 0;
        try (DecoderSession s = new DecoderSession(lm, backend, batch, Math.max(1, capacity))) {
            if (maxNewTokens > 0) {
                float[][] logits = s.prefill(prompts);
                int[][] seqs = useCache
                        ? null
                        : Arrays.stream(prompts).map(int[]::clone).toArray(int[][]::new);
                for (int step = 0; ; step++) {
                    int[] next = new int[batch];
                    boolean all = true;
                    for (int b = 0; b < batch; b++) {
                        if (done[b]) {
                            next[b] = Math.max(0, eos); // keeps the batch in step; its output is ignored
                            continue;
                        }
                        for (float x : logits[b])
                            if (!Float.isFinite(x))
                                throw new AttnException(
                                        AttnException.Code.NON_FINITE,
                                        "non-finite logit " + x + " for sequence " + b + " at step " + step);
                        int id = sampler.sample(logits[b]);
                        next[b] = id;
                        out[b][count[b]++] = id;
                        if (listener != null) listener.token(b, id);
                        if (id == eos || count[b] == maxNewTokens) done[b] = true;
                        all &= done[b];
                    }
                    if (step == 0) prefill = System.nanoTime() - t0;
                    if (all) break;
                    if (useCache) logits = s.step(next);
                    else {
                        for (int b = 0; b < batch; b++) {
                            seqs[b] = Arrays.copyOf(seqs[b], seqs[b].length + 1);
                            seqs[b][seqs[b].length - 1] = next[b];
                        }
                        logits = s.prefill(seqs);
                    }
                }
            }
        }
        int[][] tokens = new int[batch][];
        for (int b = 0; b < batch; b++) tokens[b] = Arrays.copyOf(out[b], count[b]);
        return new Generation(tokens, prefill, System.nanoTime() - t0);
    }
}
