package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * ADD, ADD_BIAS, SCALE, RELU, GELU and SILU: vectorised element-wise loops, split across threads when large (GELU's
 * arithmetic is {@link Gelu}'s, shared with the GEMM epilogue).
 */
public final class Elementwise {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    /** Elements per parallel chunk: smaller arrays run on the calling thread. */
    static final int GRAIN = 1 << 16;

    private Elementwise() {}

    /** {@code out = x + y} over {@code n} elements. */
    public static void add(Parallel par, float[] out, float[] x, float[] y, int n) {
        par.forRange(n, GRAIN, (from, to) -> {
            int i = from;
            for (int ub = from + SP.loopBound(to - from); i < ub; i += SP.length())
                FloatVector.fromArray(SP, x, i)
                        .add(FloatVector.fromArray(SP, y, i))
                        .intoArray(out, i);
            for (; i < to; i++) out[i] = x[i] + y[i];
        });
    }

    /** {@code out[r, j] = x[r, j] + bias[j]} for {@code rows} rows of width {@code n}. */
    public static void addBias(Parallel par, float[] out, float[] x, float[] bias, int rows, int n) {
        par.forRange(rows, Math.max(1, GRAIN / Math.max(1, n)), (from, to) -> {
            for (int r = from; r < to; r++) {
                int o = r * n, j = 0;
                for (int ub = SP.loopBound(n); j < ub; j += SP.length())
                    FloatVector.fromArray(SP, x, o + j)
                            .add(FloatVector.fromArray(SP, bias, j))
                            .intoArray(out, o + j);
                for (; j < n; j++) out[o + j] = x[o + j] + bias[j];
            }
        });
    }

    /** {@code out = x * factor}. */
    public static void scale(Parallel par, float[] out, float[] x, float factor, int n) {
        par.forRange(n, GRAIN, (from, to) -> {
            int i = from;
            for (int ub = from + SP.loopBound(to - from); i < ub; i += SP.length())
                FloatVector.fromArray(SP, x, i).mul(factor).intoArray(out, i);
            for (; i < to; i++) out[i] = x[i] * factor;
        });
    }

    /** {@code out = x / (1 + e^-x)} (SiLU); the exponential in double, rounded once. */
    public static void silu(Parallel par, float[] out, float[] x, int n) {
        par.forRange(n, GRAIN, (from, to) -> {
            for (int i = from; i < to; i++) out[i] = (float) (x[i] / (1 + Math.exp(-x[i])));
        });
    }

    /** {@code out = gelu(x)}, exact (erf) or tanh form ({@link Gelu#range}). */
    public static void gelu(Parallel par, float[] out, float[] x, int n, boolean tanh) {
        par.forRange(n, GRAIN / 4, (from, to) -> Gelu.range(out, x, from, to, tanh));
    }

    /** {@code out = max(x, 0)} (NaN stays NaN, as in PyTorch). */
    public static void relu(Parallel par, float[] out, float[] x, int n) {
        par.forRange(n, GRAIN, (from, to) -> {
            int i = from;
            for (int ub = from + SP.loopBound(to - from); i < ub; i += SP.length()) {
                FloatVector v = FloatVector.fromArray(SP, x, i);
                v.blend(0f, v.compare(jdk.incubator.vector.VectorOperators.LT, 0f))
                        .intoArray(out, i);
            }
            for (; i < to; i++) out[i] = x[i] < 0f ? 0f : x[i];
        });
    }
}
