package io.attn.cpu.ops;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * GELU, both forms, vectorised: the arithmetic of the GELU op ({@link Elementwise#gelu}) and of the GEMM epilogue.
 *
 * <ul>
 *   <li>Exact: {@code 0.5 x (1 + erf(x/sqrt2))}, written as {@code 0.5 x (2 - erfc(z))} for {@code z = x/sqrt2 >= 0}
 *       and {@code 0.5 x erfc(|z|)} below zero, so the negative tail keeps its relative accuracy (no {@code 1 - 1}
 *       cancellation). {@code erfc} is the Chebyshev fit of Numerical Recipes ({@code erfcc}, fractional error below
 *       1.2e-7 for every argument): {@code t = 1/(1+a/2)}, {@code erfc(a) = t exp(-a^2 + P(t))}, the exponential
 *       inlined ({@link VExp#exp}: the library's vector exp is a call per vector, which made this op 2x slower).
 *   <li>Tanh: {@code 0.5 x (1 + tanh(u))} with {@code u = sqrt(2/pi)(x + 0.044715 x^3)} is exactly {@code x /
 *       (1 + exp(-2u))}; that form never overflows into NaN (exp gives +inf, x/inf = 0) and keeps both tails accurate.
 * </ul>
 */
public final class Gelu {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final float INV_SQRT2 = (float) (1 / Math.sqrt(2));
    private static final float K_TANH = (float) Math.sqrt(2 / Math.PI);
    private static final float C3 = 0.044715f;
    // erfcc coefficients, highest degree first: P(t) = -1.26551223 + t(1.00002368 + ... + t 0.17087277)
    private static final float P9 = 0.17087277f, P8 = -0.82215223f, P7 = 1.48851587f, P6 = -1.13520398f;
    private static final float P5 = 0.27886807f, P4 = -0.18628806f, P3 = 0.09678418f, P2 = 0.37409196f;
    private static final float P1 = 1.00002368f, P0 = -1.26551223f;

    private Gelu() {}

    /**
     * {@code out[i] = gelu(x[i])} for {@code from <= i < to} ({@code out} may be {@code x}). Every element goes through
     * the vector code (a last partial vector through a zero-padded copy), so a value does not depend on where a range
     * starts or ends: the GEMM epilogue ({@link Gemm.Epilogue}), through {@link #tile}, gives bitwise what the GELU op
     * gives.
     */
    static void range(float[] out, float[] x, int from, int to, boolean tanh) {
        int full = from + SP.loopBound(to - from);
        if (tanh) tanhVectors(out, x, from, full);
        else exactVectors(out, x, from, full, 1, 0);
        if (full < to) {
            float[] t = new float[SP.length()];
            System.arraycopy(x, full, t, 0, to - full);
            if (tanh) tanhVectors(t, t, 0, t.length);
            else exactVectors(t, t, 0, t.length, 1, 0);
            System.arraycopy(t, 0, out, full, to - full);
        }
    }

    /**
     * {@link #range} in place over a tile of {@code rows} rows of {@code cols} values, {@code ld} apart, from {@code
     * c[o]}: the GEMM epilogue's tiles. Where the rows are whole vectors, one loop over the tile: the exact form's
     * dependency chain (a division, the polynomial, the exponential) is long, and a call per row of two vectors left
     * too few independent vectors in flight to cover it. The same operations per element as {@link #range}.
     */
    static void tile(float[] c, int o, int ld, int rows, int cols, boolean tanh) {
        if (tanh || cols % SP.length() != 0)
            for (int r = 0; r < rows; r++) range(c, c, o + r * ld, o + r * ld + cols, tanh);
        else exactVectors(c, c, o, o + cols, rows, ld);
    }

    /**
     * Exact GELU over whole vectors, {@code [from, to)} and the same range {@code ld} further on for each of {@code
     * rows} rows: {@code to - from} is a multiple of the vector length.
     */
    private static void exactVectors(float[] out, float[] x, int from, int to, int rows, int ld) {
        for (int r = 0; r < rows; r++, from += ld, to += ld)
            for (int i = from; i < to; i += SP.length()) {
                FloatVector v = FloatVector.fromArray(SP, x, i);
                FloatVector a = v.mul(INV_SQRT2).abs();
                FloatVector t = a.fma(0.5f, 1f);
                t = FloatVector.broadcast(SP, 1f).div(t);
                // P(t) by Estrin's scheme: pairs, then powers t^2, t^4, t^8 (four levels instead of Horner's chain of
                // nine FMAs): the op is bound by its dependency chain; 14-15% faster on Zen 1 with the same accuracy
                // (benchmarks/probes/GeluProbe.java)
                FloatVector t2 = t.mul(t), t4 = t2.mul(t2), t8 = t4.mul(t4);
                FloatVector q0 = t.fma(P1, P0), q1 = t.fma(P3, P2), q2 = t.fma(P5, P4), q3 = t.fma(P7, P6);
                FloatVector p =
                        q3.fma(t2, q2).fma(t4, q1.fma(t2, q0)).add(t.fma(P9, P8).mul(t8));
                FloatVector e = t.mul(VExp.exp(p.sub(a.mul(a)))); // erfc(|z|); exp of arguments <= 0.4
                FloatVector f = e.neg().add(2f).blend(e, v.compare(VectorOperators.LT, 0f));
                v.mul(0.5f).mul(f).intoArray(out, i);
            }
    }

    /** Tanh-form GELU over whole vectors. */
    private static void tanhVectors(float[] out, float[] x, int from, int to) {
        for (int i = from; i < to; i += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, i);
            FloatVector u =
                    v.mul(v).mul(v).fma(FloatVector.broadcast(SP, C3), v).mul(-2f * K_TANH);
            v.div(u.lanewise(VectorOperators.EXP).add(1f)).intoArray(out, i);
        }
    }
}
