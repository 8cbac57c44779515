package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * LAYER_NORM over the last dim, corrected two-pass (mean, then the biased variance from {@code d = x - mean} with
 * the mean refined by {@code sum(d)/E}; no catastrophic cancellation): {@code (x - mean) / sqrt(var + eps) * w + b}, with optional w and b.
 */
public final class LayerNorm {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    private LayerNorm() {}

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        OpParams.LayerNorm p = node.params(OpParams.LayerNorm.class);
        int e = node.shape().dim(-1), rows = node.shape().leading(1);
        float[] x = in[0];
        float[] w = p.hasWeight() ? in[1] : null;
        float[] bias = p.hasBias() ? in[p.hasWeight() ? 2 : 1] : null;
        float eps = p.eps();
        par.forRange(rows, Math.max(1, Elementwise.GRAIN / Math.max(1, e)), (from, to) -> {
            float[] lane = new float[SP.length()];
            for (int r = from; r < to; r++) row(out, x, r * e, e, w, bias, eps, lane);
        });
    }

    /**
     * One row. The lane sums reach {@link Lanes#sum(float[], int)} through {@code lane} (one vector of scratch), not as
     * vectors: a vector handed to a call C2 does not inline is boxed, the loop's accumulator on every iteration (see
     * {@link VExp#exp2Sub}).
     */
    private static void row(float[] out, float[] x, int o, int e, float[] w, float[] b, float eps, float[] lane) {
        if (e == 0) return;
        int c = 0;
        FloatVector acc = FloatVector.zero(SP);
        for (int ub = SP.loopBound(e); c < ub; c += SP.length()) acc = acc.add(FloatVector.fromArray(SP, x, o + c));
        acc.intoArray(lane, 0);
        float sum = Lanes.sum(lane, 0); // fixed order: bitwise the same interpreted and compiled
        for (; c < e; c++) sum += x[o + c];
        float mean = sum / e;
        // second pass over d = x - mean: sum(d) corrects the float rounding of the first mean (corrected two-pass)
        acc = FloatVector.zero(SP);
        FloatVector accD = FloatVector.zero(SP);
        c = 0;
        for (int ub = SP.loopBound(e); c < ub; c += SP.length()) {
            FloatVector d = FloatVector.fromArray(SP, x, o + c).sub(mean);
            accD = accD.add(d);
            acc = d.fma(d, acc);
        }
        accD.intoArray(lane, 0);
        float sd = Lanes.sum(lane, 0);
        acc.intoArray(lane, 0);
        float sq = Lanes.sum(lane, 0);
        for (; c < e; c++) {
            float d = x[o + c] - mean;
            sd += d;
            sq += d * d;
        }
        float shift = sd / e;
        mean += shift;
        sq = Math.max(0f, sq / e - shift * shift) * e;
        float rstd = (float) (1.0 / Math.sqrt(sq / e + (double) eps));
        c = 0;
        for (int ub = SP.loopBound(e); c < ub; c += SP.length()) {
            FloatVector y = FloatVector.fromArray(SP, x, o + c).sub(mean).mul(rstd);
            if (w != null) y = y.mul(FloatVector.fromArray(SP, w, c));
            if (b != null) y = y.add(FloatVector.fromArray(SP, b, c));
            y.intoArray(out, o + c);
        }
        for (; c < e; c++) {
            float y = (x[o + c] - mean) * rstd;
            if (w != null) y *= w[c];
            if (b != null) y += b[c];
            out[o + c] = y;
        }
    }
}
