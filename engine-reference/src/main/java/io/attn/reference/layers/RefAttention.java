package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Map;

/**
 * Double-precision reference for {@code F.scaled_dot_product_attention} and {@code nn.MultiheadAttention}
 * ({@code batch_first=True}, eval mode, no dropout), written from PyTorch's documented semantics.
 *
 * <p>Masks, as in PyTorch's {@code nn.MultiheadAttention} and the engine's {@code MaskSpec}: a boolean mask (stored as
 * float, non-zero = true) masks OUT where true, i.e. that score becomes {@code -inf}; a float mask is added to the
 * scaled scores; {@code isCausal} masks key {@code s > l} for query {@code l} ({@code triu(ones(L,S),1)}, top-left
 * aligned). All given masks apply together. NOTE: {@code F.scaled_dot_product_attention} itself reads a boolean mask
 * the other way round (true = take part); this reference keeps the engine's "true = masked out" convention for
 * {@link #sdpa} too, and {@code tools/golden_torch.py} inverts the mask when it calls PyTorch.
 *
 * <p>Fully masked rows: a query row whose scores are all {@code -inf} gets ALL-ZERO weights and hence a zero output
 * (before any output projection). This is the project's documented convention; PyTorch's math path gives NaN there.
 */
public final class RefAttention {
    private RefAttention() {}

    /** Attention output {@code (B,H,L,Dv)} and softmax weights {@code (B,H,L,S)}. */
    public record AttentionResult(DTensor output, DTensor weights) {}

    /**
     * Result of {@link #multiheadAttention}: {@code output} (B,L,E); {@code weights} as PyTorch returns them, (B,L,S)
     * averaged over heads or (B,H,L,S) per head, null when {@code needWeights} is false; {@code headWeights} always
     * holds the per-head weights (B,H,L,S).
     */
    public record MhaResult(DTensor output, DTensor weights, DTensor headWeights) {
        /** Per-head weights averaged over heads, (B,L,S). */
        public DTensor averagedWeights() {
            return averageHeads(headWeights);
        }
    }

    /** Additive mask value for score (b,h,l,s): 0, a float, or -inf. */
    @FunctionalInterface
    interface MaskFn {
        double at(int b, int h, int l, int s);
    }

    /**
     * {@code F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)} on q (B,H,L,D), k (B,H,S,D), v
     * (B,H,S,Dv).
     *
     * @param attnMask null, or a mask broadcastable to (B,H,L,S): shape (L,S), (H|1,L,S) or (B|1,H|1,L,S)
     * @param attnMaskIsBool true: non-zero = masked out (see the class note); false: added to the scaled scores
     * @param scale null for the default {@code 1/sqrt(D)}
     */
    public static AttentionResult sdpa(
            Tensor q, Tensor k, Tensor v, Tensor attnMask, boolean attnMaskIsBool, boolean isCausal, Double scale) {
        if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
            throw new IllegalArgumentException("sdpa wants rank-4 q, k, v, got " + q + ", " + k + ", " + v);
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = k.dim(2);
        if (k.dim(0) != b || k.dim(1) != h || k.dim(3) != d)
            throw new IllegalArgumentException("k " + k + " does not fit q " + q);
        if (v.dim(0) != b || v.dim(1) != h || v.dim(2) != s)
            throw new IllegalArgumentException("v " + v + " does not fit k " + k);
        double sc = scale == null ? 1.0 / Math.sqrt(d) : scale;
        MaskFn user = broadcastMask(attnMask, attnMaskIsBool, b, h, l, s);
        MaskFn mask = (bi, hi, li, si) -> isCausal && si > li ? Double.NEGATIVE_INFINITY : user.at(bi, hi, li, si);
        return attend(DTensor.of(q), DTensor.of(k), DTensor.of(v), sc, mask);
    }

    /** {@code nn.MultiheadAttention} forward with a boolean key-padding mask; see the full overload. */
    public static MhaResult multiheadAttention(
            Map<String, Tensor> sd,
            String prefix,
            int embedDim,
            int numHeads,
            Tensor query,
            Tensor key,
            Tensor value,
            Tensor keyPaddingMask,
            Tensor attnMask,
            boolean attnMaskIsBool,
            boolean isCausal,
            boolean needWeights,
            boolean averageAttnWeights) {
        return multiheadAttention(
                sd,
                prefix,
                embedDim,
                numHeads,
                DTensor.of(query),
                DTensor.of(key),
                DTensor.of(value),
                keyPaddingMask,
                true,
                attnMask,
                attnMaskIsBool,
                isCausal,
                needWeights,
                averageAttnWeights);
    }

    /**
     * {@code nn.MultiheadAttention(embedDim, numHeads, batch_first=True)} forward, eval mode. State dict names under
     * {@code prefix}: {@code in_proj_weight} (3E,E) with q rows [0,E), k rows [E,2E), v rows [2E,3E);
     * {@code in_proj_bias} (3E) and {@code out_proj.bias} (E), both absent for bias=False; {@code out_proj.weight}
     * (E,E). Scores are scaled by {@code 1/sqrt(E/H)}; head h uses columns [h*D, (h+1)*D) of the projections.
     *
     * @param query (B,L,E)
     * @param key (B,S,E)
     * @param value (B,S,E)
     * @param keyPaddingMask null or (B,S); bool (non-zero = padding, masked out) or float (added)
     * @param attnMask null, (L,S) or (B*numHeads,L,S) indexed {@code b*numHeads + h}, as in PyTorch
     * @param isCausal adds the causal mask {@code triu(ones(L,S),1)} (PyTorch treats it as a hint that attnMask is
     *     causal; applying it explicitly gives the same result)
     */
    public static MhaResult multiheadAttention(
            Map<String, Tensor> sd,
            String prefix,
            int embedDim,
            int numHeads,
            DTensor query,
            DTensor key,
            DTensor value,
            Tensor keyPaddingMask,
            boolean keyPaddingIsBool,
            Tensor attnMask,
            boolean attnMaskIsBool,
            boolean isCausal,
            boolean needWeights,
            boolean averageAttnWeights) {
        int e = embedDim, nh = numHeads;
        if (nh <= 0 || e % nh != 0)
            throw new IllegalArgumentException("embed_dim " + e + " is not divisible by num_heads " + nh);
        requireShape(query, "query", -1, -1, e);
        int b = query.dim(0), l = query.dim(1), s = key.dim(1);
        requireShape(key, "key", b, s, e);
        requireShape(value, "value", b, s, e);
        Tensor wIn = StateDicts.require(sd, prefix + "in_proj_weight", 3 * e, e);
        Tensor bIn = StateDicts.optional(sd, prefix + "in_proj_bias", 3 * e);
        Tensor wOut = StateDicts.require(sd, prefix + "out_proj.weight", e, e);
        Tensor bOut = StateDicts.optional(sd, prefix + "out_proj.bias", e);
        float[] bInData = bIn == null ? null : bIn.data();

        DTensor q = RefMath.linearRows(query, wIn.data(), 0, e, e, bInData);
        DTensor k = RefMath.linearRows(key, wIn.data(), e, e, e, bInData);
        DTensor v = RefMath.linearRows(value, wIn.data(), 2 * e, e, e, bInData);
        int d = e / nh;

        MaskFn mask = mhaMask(keyPaddingMask, keyPaddingIsBool, attnMask, attnMaskIsBool, isCausal, b, nh, l, s);
        AttentionResult att = attend(splitHeads(q, nh), splitHeads(k, nh), splitHeads(v, nh), 1.0 / Math.sqrt(d), mask);
        DTensor out = RefMath.linear(mergeHeads(att.output()), wOut, bOut);
        DTensor w = !needWeights ? null : averageAttnWeights ? averageHeads(att.weights()) : att.weights();
        return new MhaResult(out, w, att.weights());
    }

    private static MaskFn mhaMask(
            Tensor kpm,
            boolean kpmIsBool,
            Tensor attnMask,
            boolean attnIsBool,
            boolean isCausal,
            int b,
            int nh,
            int l,
            int s) {
        if (kpm != null && !Arrays.equals(kpm.shape().dims(), new int[] {b, s}))
            throw new IllegalArgumentException("key_padding_mask " + kpm + " must be (" + b + ", " + s + ")");
        boolean perHead;
        if (attnMask == null) perHead = false;
        else if (Arrays.equals(attnMask.shape().dims(), new int[] {l, s})) perHead = false;
        else if (Arrays.equals(attnMask.shape().dims(), new int[] {b * nh, l, s})) perHead = true;
        else
            throw new IllegalArgumentException("attn_mask " + attnMask + " must be (" + l + ", " + s + ") or (" + b * nh
                    + ", " + l + ", " + s + ")");
        float[] kd = kpm == null ? null : kpm.data();
        float[] ad = attnMask == null ? null : attnMask.data();
        return (bi, hi, li, si) -> {
            if (isCausal && si > li) return Double.NEGATIVE_INFINITY;
            double m = 0;
            if (kd != null) {
                double x = kd[bi * s + si];
                if (kpmIsBool) {
                    if (x != 0) return Double.NEGATIVE_INFINITY;
                } else m += x;
            }
            if (ad != null) {
                int off = (perHead ? (bi * nh + hi) * l * s : 0) + li * s + si;
                double x = ad[off];
                if (attnIsBool) {
                    if (x != 0) return Double.NEGATIVE_INFINITY;
                } else m += x;
            }
            return m;
        };
    }

    /**
     * The core: {@code softmax(q k^T * scale + mask) v} per (b, h), q (B,H,L,D), k (B,H,S,D), v (B,H,S,Dv).
     * Fully masked rows (every score {@code -inf}) get zero weights by convention (see the class note).
     */
    static AttentionResult attend(DTensor q, DTensor k, DTensor v, double scale, MaskFn mask) {
        int nb = q.dim(0), nh = q.dim(1), l = q.dim(2), d = q.dim(3), s = k.dim(2), dv = v.dim(3);
        double[] qd = q.data(), kd = k.data(), vd = v.data();
        double[] w = new double[nb * nh * l * s];
        double[] out = new double[nb * nh * l * dv];
        double[] row = new double[s];
        for (int b = 0; b < nb; b++) {
            for (int h = 0; h < nh; h++) {
                int bh = b * nh + h;
                for (int i = 0; i < l; i++) {
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < s; j++) {
                        double dot = 0;
                        for (int c = 0; c < d; c++) dot += qd[(bh * l + i) * d + c] * kd[(bh * s + j) * d + c];
                        row[j] = dot * scale + mask.at(b, h, i, j);
                        max = Math.max(max, row[j]);
                    }
                    int wo = (bh * l + i) * s;
                    // Fully masked row: leave the weights and this output row at zero (project convention;
                    // PyTorch's math path would produce NaN from softmax over all -inf).
                    if (max == Double.NEGATIVE_INFINITY) continue;
                    double sum = 0;
                    for (int j = 0; j < s; j++) {
                        row[j] = Math.exp(row[j] - max);
                        sum += row[j];
                    }
                    for (int j = 0; j < s; j++) w[wo + j] = row[j] / sum;
                    int oo = (bh * l + i) * dv;
                    for (int j = 0; j < s; j++) {
                        double p = w[wo + j];
                        if (p == 0) continue;
                        for (int c = 0; c < dv; c++) out[oo + c] += p * vd[(bh * s + j) * dv + c];
                    }
                }
            }
        }
        return new AttentionResult(
                new DTensor(new int[] {nb, nh, l, dv}, out), new DTensor(new int[] {nb, nh, l, s}, w));
    }

    /** Mask broadcast right-aligned to (B,H,L,S) with numpy rules (each dim equal or 1); null gives no mask. */
    private static MaskFn broadcastMask(Tensor m, boolean isBool, int b, int h, int l, int s) {
        if (m == null) return (bi, hi, li, si) -> 0.0;
        int r = m.rank();
        if (r < 2 || r > 4) throw new IllegalArgumentException("attn_mask must have rank 2..4, got " + m);
        int[] target = {b, h, l, s};
        int[] dims = new int[4];
        Arrays.fill(dims, 1);
        for (int i = 0; i < r; i++) dims[4 - r + i] = m.dim(i);
        int[] stride = new int[4];
        int acc = 1;
        for (int i = 3; i >= 0; i--) {
            if (dims[i] != target[i] && dims[i] != 1)
                throw new IllegalArgumentException(
                        "attn_mask " + m + " does not broadcast to " + Arrays.toString(target));
            stride[i] = dims[i] == 1 ? 0 : acc;
            acc *= dims[i];
        }
        float[] md = m.data();
        return (bi, hi, li, si) -> {
            double x = md[bi * stride[0] + hi * stride[1] + li * stride[2] + si * stride[3]];
            if (isBool) return x != 0 ? Double.NEGATIVE_INFINITY : 0.0;
            return x;
        };
    }

    /** (B,T,E) -> (B,H,T,E/H), head h taking columns [h*D, (h+1)*D). */
    static DTensor splitHeads(DTensor x, int nh) {
        int b = x.dim(0), t = x.dim(1), e = x.dim(2), d = e / nh;
        double[] out = new double[x.size()];
        for (int bi = 0; bi < b; bi++)
            for (int ti = 0; ti < t; ti++)
                for (int h = 0; h < nh; h++)
                    for (int c = 0; c < d; c++)
                        out[((bi * nh + h) * t + ti) * d + c] = x.data()[(bi * t + ti) * e + h * d + c];
        return new DTensor(new int[] {b, nh, t, d}, out);
    }

    /** (B,H,T,D) -> (B,T,H*D), the inverse of {@link #splitHeads}. */
    static DTensor mergeHeads(DTensor x) {
        int b = x.dim(0), nh = x.dim(1), t = x.dim(2), d = x.dim(3);
        double[] out = new double[x.size()];
        for (int bi = 0; bi < b; bi++)
            for (int h = 0; h < nh; h++)
                for (int ti = 0; ti < t; ti++)
                    for (int c = 0; c < d; c++)
                        out[(bi * t + ti) * nh * d + h * d + c] = x.data()[((bi * nh + h) * t + ti) * d + c];
        return new DTensor(new int[] {b, t, nh * d}, out);
    }

    /** (B,H,L,S) -> (B,L,S), the mean over heads (what {@code average_attn_weights=True} returns). */
    public static DTensor averageHeads(DTensor w) {
        int b = w.dim(0), nh = w.dim(1), l = w.dim(2), s = w.dim(3);
        double[] out = new double[b * l * s];
        for (int bi = 0; bi < b; bi++)
            for (int h = 0; h < nh; h++)
                for (int i = 0; i < l * s; i++) out[bi * l * s + i] += w.data()[(bi * nh + h) * l * s + i];
        for (int i = 0; i < out.length; i++) out[i] /= nh;
        return new DTensor(new int[] {b, l, s}, out);
    }

    private static void requireShape(DTensor x, String name, int d0, int d1, int d2) {
        if (x.rank() != 3 || (d0 >= 0 && x.dim(0) != d0) || (d1 >= 0 && x.dim(1) != d1) || x.dim(2) != d2)
            throw new IllegalArgumentException(name + " " + x + " must be (B, T, " + d2 + ") matching the query");
    }
}
