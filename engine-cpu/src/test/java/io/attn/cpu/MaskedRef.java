package io.attn.cpu;

import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.tensor.Tensor;

/**
 * Naive double-precision reference for masked softmax and attention, written straight from the MaskSpec javadoc:
 * scores {@code scale * s + additive}, masked keys get no weight, a fully masked row has all-zero weights.
 */
final class MaskedRef {
    private MaskedRef() {}

    /** Weights (B, H, L, S) from raw scores {@code raw[b][h][i][j]}. */
    static double[] weights(double[][][][] raw, float scale, MaskSpec spec, Tensor mask, Tensor pad) {
        int bn = raw.length, hn = raw[0].length, ln = raw[0][0].length, sn = raw[0][0][0].length;
        double[] w = new double[bn * hn * ln * sn];
        for (int b = 0; b < bn; b++)
            for (int h = 0; h < hn; h++)
                for (int i = 0; i < ln; i++) {
                    double[] sc = new double[sn];
                    boolean[] masked = new boolean[sn];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < sn; j++) {
                        double s = scale * raw[b][h][i][j];
                        if (spec.causal() && j > i) masked[j] = true;
                        if (mask != null) {
                            double m = mask.rank() == 2
                                    ? mask.get(i, j)
                                    : mask.get(mask.dim(0) == 1 ? 0 : b, mask.dim(1) == 1 ? 0 : h, i, j);
                            if (spec.attnMask() == MaskKind.BOOL) masked[j] |= m != 0;
                            else if (m == Double.NEGATIVE_INFINITY) masked[j] = true;
                            else s += m;
                        }
                        if (pad != null) {
                            double m = pad.get(b, j);
                            if (spec.keyPadding() == MaskKind.BOOL) masked[j] |= m != 0;
                            else if (m == Double.NEGATIVE_INFINITY) masked[j] = true;
                            else s += m;
                        }
                        sc[j] = s;
                        if (!masked[j]) max = Math.max(max, s);
                    }
                    int o = ((b * hn + h) * ln + i) * sn;
                    if (max == Double.NEGATIVE_INFINITY) continue; // all masked: zeros
                    double sum = 0;
                    for (int j = 0; j < sn; j++) if (!masked[j]) sum += Math.exp(sc[j] - max);
                    for (int j = 0; j < sn; j++) w[o + j] = masked[j] ? 0 : Math.exp(sc[j] - max) / sum;
                }
        return w;
    }

    /** softmax(scale Q K^T + masks) V in double; q (B,H,L,D), k (B,H,S,D), v (B,H,S,Dv). */
    static double[] attention(Tensor q, Tensor k, Tensor v, float scale, MaskSpec spec, Tensor mask, Tensor pad) {
        int bn = q.dim(0), hn = q.dim(1), ln = q.dim(2), d = q.dim(3), sn = k.dim(2), dv = v.dim(3);
        double[][][][] raw = new double[bn][hn][ln][sn];
        for (int b = 0; b < bn; b++)
            for (int h = 0; h < hn; h++)
                for (int i = 0; i < ln; i++)
                    for (int j = 0; j < sn; j++) {
                        int qo = ((b * hn + h) * ln + i) * d, ko = ((b * hn + h) * sn + j) * d;
                        double s = 0;
                        for (int c = 0; c < d; c++) s += (double) q.data()[qo + c] * k.data()[ko + c];
                        raw[b][h][i][j] = s;
                    }
        double[] w = weights(raw, scale, spec, mask, pad);
        double[] out = new double[bn * hn * ln * dv];
        for (int b = 0; b < bn; b++)
            for (int h = 0; h < hn; h++)
                for (int i = 0; i < ln; i++)
                    for (int c = 0; c < dv; c++) {
                        double s = 0;
                        for (int j = 0; j < sn; j++)
                            s += w[((b * hn + h) * ln + i) * sn + j] * v.data()[((b * hn + h) * sn + j) * dv + c];
                        out[((b * hn + h) * ln + i) * dv + c] = s;
                    }
        return out;
    }
}
