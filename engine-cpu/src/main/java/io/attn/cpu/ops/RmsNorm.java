package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * RMS_NORM over the last dim: {@code x / sqrt(mean(x^2) + eps) * w} (w optional), as transformers' {@code
 * LlamaRMSNorm} computes it in float32: the sum of squares in float lanes (FMA) summed in a fixed order ({@link
 * Lanes}), the reciprocal root in double rounded once, then {@code (x * rstd) * w}.
 */
public final class RmsNorm {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    private RmsNorm() {}

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        OpParams.RmsNorm p = node.params(OpParams.RmsNorm.class);
        int e = node.shape().dim(-1), rows = node.shape().leading(1);
        float[] x = in[0], w = p.hasWeight() ? in[1] : null;
        float eps = p.eps();
        par.forRange(rows, Math.max(1, Elementwise.GRAIN / Math.max(1, e)), (from, to) -> {
            float[] lane = new float[SP.length()];
            for (int r = from; r < to; r++) row(out, x, r * e, e, w, eps, lane);
        });
    }

    /** One row; the lane sums go through {@code lane}, not as a vector (see {@code LayerNorm.row}). */
    private static void row(float[] out, float[] x, int o, int e, float[] w, float eps, float[] lane) {
        if (e == 0) return;
        int c = 0;
        FloatVector acc = FloatVector.zero(SP);
        for (int ub = SP.loopBound(e); c < ub; c += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, o + c);
            acc = v.fma(v, acc);
        }
        acc.intoArray(lane, 0);
        float sq = Lanes.sum(lane, 0);
        for (; c < e; c++) sq += x[o + c] * x[o + c];
        float rstd = (float) (1.0 / Math.sqrt(sq / e + (double) eps));
        c = 0;
        for (int ub = SP.loopBound(e); c < ub; c += SP.length()) {
            FloatVector y = FloatVector.fromArray(SP, x, o + c).mul(rstd);
            if (w != null) y = y.mul(FloatVector.fromArray(SP, w, c));
            y.intoArray(out, o + c);
        }
        for (; c < e; c++) {
            float y = x[o + c] * rstd;
            out[o + c] = w != null ? y * w[c] : y;
        }
    }
}
