package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * GELU, both forms, vectorised.
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

    public static void run(Parallel par, float[] out, float[] x, int n, boolean tanh) {
        par.forRange(n, Elementwise.GRAIN / 4, (from, to) -> {
            if (tanh) tanhRange(out, x, from, to);
            else exactRange(out, x, from, to);
        });
    }

    private static void exactRange(float[] out, float[] x, int from, int to) {
        int i = from;
        for (int ub = from + SP.loopBound(to - from); i < ub; i += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, i);
            FloatVector a = v.mul(INV_SQRT2).abs();
            FloatVector t = a.fma(0.5f, 1f);
            t = FloatVector.broadcast(SP, 1f).div(t);
            FloatVector p = t.fma(P9, P8);
            p = p.fma(t, FloatVector.broadcast(SP, P7));
            p = p.fma(t, FloatVector.broadcast(SP, P6));
            p = p.fma(t, FloatVector.broadcast(SP, P5));
            p = p.fma(t, FloatVector.broadcast(SP, P4));
            p = p.fma(t, FloatVector.broadcast(SP, P3));
            p = p.fma(t, FloatVector.broadcast(SP, P2));
            p = p.fma(t, FloatVector.broadcast(SP, P1));
            p = p.fma(t, FloatVector.broadcast(SP, P0));
            FloatVector e = t.mul(VExp.exp(p.sub(a.mul(a)))); // erfc(|z|); exp of arguments <= 0.4
            FloatVector f = e.neg().add(2f).blend(e, v.compare(VectorOperators.LT, 0f));
            v.mul(0.5f).mul(f).intoArray(out, i);
        }
        for (; i < to; i++) out[i] = exact(x[i]);
    }

    private static void tanhRange(float[] out, float[] x, int from, int to) {
        int i = from;
        for (int ub = from + SP.loopBound(to - from); i < ub; i += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, i);
            FloatVector u =
                    v.mul(v).mul(v).fma(FloatVector.broadcast(SP, C3), v).mul(-2f * K_TANH);
            v.div(u.lanewise(VectorOperators.EXP).add(1f)).intoArray(out, i);
        }
        for (; i < to; i++) out[i] = tanhForm(x[i]);
    }

    /** Scalar exact GELU, the same arithmetic as the vector loop. */
    static float exact(float x) {
        float a = Math.abs(x * INV_SQRT2);
        float t = 1f / Math.fma(a, 0.5f, 1f);
        float p = Math.fma(t, P9, P8);
        p = Math.fma(p, t, P7);
        p = Math.fma(p, t, P6);
        p = Math.fma(p, t, P5);
        p = Math.fma(p, t, P4);
        p = Math.fma(p, t, P3);
        p = Math.fma(p, t, P2);
        p = Math.fma(p, t, P1);
        p = Math.fma(p, t, P0);
        float e = t * (float) Math.exp(p - a * a);
        return 0.5f * x * (x < 0f ? e : 2f - e);
    }

    /** Scalar tanh-form GELU. */
    static float tanhForm(float x) {
        float u = Math.fma(x * x * x, C3, x) * (-2f * K_TANH);
        return x / ((float) Math.exp(u) + 1f);
    }
}
