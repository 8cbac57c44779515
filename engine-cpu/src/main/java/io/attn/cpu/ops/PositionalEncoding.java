package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;

/**
 * POSITIONAL_ENCODING: {@code out[b, l, :] = x[b, l, :] + PE[offset + l, :]}, with {@code PE[pos, 2i] = sin(pos
 * w_i)}, {@code PE[pos, 2i+1] = cos(pos w_i)}, {@code w_i = exp(-ln(10000) 2i / E)}. Angles are computed in double:
 * positions reach the tens of thousands, where a float angle would already be off by more than 1e-3 rad.
 */
public final class PositionalEncoding {
    private PositionalEncoding() {}

    public static void run(Parallel par, Node node, float[] out, float[] x) {
        int offset = node.params(OpParams.PositionalEncoding.class).offset();
        int b = node.shape().dim(0), l = node.shape().dim(1), e = node.shape().dim(2);
        double[] w = new double[(e + 1) / 2];
        for (int i = 0; i < w.length; i++) w[i] = Math.exp(-Math.log(10000.0) * (2.0 * i) / e);
        par.forRange(l, Math.max(1, 4096 / Math.max(1, e)), (from, to) -> {
            float[] pe = new float[e];
            for (int pos = from; pos < to; pos++) {
                double p = (double) offset + pos;
                for (int i = 0; 2 * i < e; i++) {
                    double angle = p * w[i];
                    pe[2 * i] = (float) Math.sin(angle);
                    if (2 * i + 1 < e) pe[2 * i + 1] = (float) Math.cos(angle);
                }
                for (int bb = 0; bb < b; bb++) {
                    int o = (bb * l + pos) * e;
                    for (int c = 0; c < e; c++) out[o + c] = x[o + c] + pe[c];
                }
            }
        });
    }
}
