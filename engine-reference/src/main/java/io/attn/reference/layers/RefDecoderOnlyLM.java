package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Map;

/**
 * Double-precision reference of a decoder-only language model ({@code DecoderOnlyLM}), by full recomputation of one
 * unpadded sequence: {@code x = embed[ids] + PE[0..n)} (sinusoidal, or rows of {@code pos.weight}), then {@code
 * nn.TransformerEncoderLayer}s with {@code is_causal=True} ({@link RefTransformer#encoderLayer}), the final LayerNorm
 * {@code norm.*} when present, and {@code logits = x lm_head.weight^T + lm_head.bias} ({@code embed.weight} when tied,
 * bias when present). Knows nothing of caches, padding or batches: the engine's incremental path is checked against
 * it.
 */
public final class RefDecoderOnlyLM {
    private final Map<String, Tensor> sd;
    private final LayerConfig cfg;
    private final int numLayers;
    private final boolean learned, tied, finalNorm;

    public RefDecoderOnlyLM(
            Map<String, Tensor> sd, LayerConfig cfg, int numLayers, boolean learned, boolean tied, boolean finalNorm) {
        this.sd = sd;
        this.cfg = cfg;
        this.numLayers = numLayers;
        this.learned = learned;
        this.tied = tied;
        this.finalNorm = finalNorm;
    }

    /** Logits {@code (n, V)} for every position of {@code ids}. */
    public DTensor logits(int[] ids) {
        int n = ids.length, e = cfg.dModel();
        DTensor x = RefEmbedding.embedding(sd.get("embed.weight"), ids, 1, n);
        DTensor pe;
        if (learned) {
            int[] pos = new int[n];
            for (int i = 0; i < n; i++) pos[i] = i;
            pe = RefEmbedding.embedding(sd.get("pos.weight"), pos, 1, n);
        } else pe = RefEmbedding.sinusoidalPositionalEncoding(n, e, 0).reshape(1, n, e);
        x = RefMath.add(x, pe);
        for (int i = 0; i < numLayers; i++)
            x = RefTransformer.encoderLayer(sd, "layers." + i + ".", cfg, x, null, null, true)
                    .output();
        if (finalNorm) x = RefMath.layerNorm(x, sd.get("norm.weight"), sd.get("norm.bias"), cfg.layerNormEps());
        Tensor w = tied ? sd.get("embed.weight") : sd.get("lm_head.weight");
        DTensor out = RefMath.linear(x, w, sd.get("lm_head.bias"));
        return out.reshape(n, w.dim(0));
    }

    /** The logits that follow the last token of {@code ids}. */
    public double[] nextLogits(int[] ids) {
        DTensor all = logits(ids);
        int v = all.dim(1);
        return Arrays.copyOfRange(all.data(), (ids.length - 1) * v, ids.length * v);
    }

    /**
     * Greedy decoding: {@code steps} tokens after {@code prompt}, each the arg-max (lowest id on ties) of the
     * recomputed logits. {@code minGap[0]} receives the smallest gap between the best and second-best logit seen (a
     * near-tie would make a float32 engine's choice legitimately differ).
     */
    public int[] greedy(int[] prompt, int steps, double[] minGap) {
        int[] seq = prompt.clone(), out = new int[steps];
        double gap = Double.POSITIVE_INFINITY;
        for (int s = 0; s < steps; s++) {
            double[] l = nextLogits(seq);
            int best = 0;
            for (int i = 1; i < l.length; i++) if (l[i] > l[best]) best = i;
            for (int i = 0; i < l.length; i++) if (i != best) gap = Math.min(gap, l[best] - l[i]);
            out[s] = best;
            seq = Arrays.copyOf(seq, seq.length + 1);
            seq[seq.length - 1] = best;
        }
        if (minGap != null) minGap[0] = gap;
        return out;
    }
}
