import jdk.incubator.vector.*;

/**
 * The exact GELU's erfc polynomial (degree 9 in {@code t = 1/(1 + |z|/2)}, Numerical Recipes' {@code erfcc}) evaluated
 * two ways, alone on one core (issue 19, docs/performance.md "GELU"): Horner's chain of nine FMAs, as the engine did
 * until 2026-11-26, and Estrin's scheme (pairs, then t^2, t^4, t^8), as {@code io.attn.cpu.ops.Gelu} does now. The
 * rest of the op (the division, the inlined exponential, the blend) is the engine's as it was when this was measured
 * (the exponential still clamped its argument, which {@code VExp} has since dropped: docs/performance.md). Prints each form's worst error
 * against a double-precision erfc, as a fraction of the engine's test bound (1e-6 relative + 1e-7 absolute), its
 * time per vector, the same with the JDK's vector exp ({@code lanewise(EXP)}) in place of the inlined one, and the
 * times of its parts (exponential, division, nine FMAs) in loops of their own. No dependency on attn; run it with a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/GeluProbe.java
 * </pre>
 */
public class GeluProbe {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final float INV_SQRT2 = (float) (1 / Math.sqrt(2));
    static final float P9 = 0.17087277f, P8 = -0.82215223f, P7 = 1.48851587f, P6 = -1.13520398f;
    static final float P5 = 0.27886807f, P4 = -0.18628806f, P3 = 0.09678418f, P2 = 0.37409196f;
    static final float P1 = 1.00002368f, P0 = -1.26551223f;
    static final float LOG2E = 1.44269504088896341f, LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;
    static final float MIN_ARG = -87.33654f, ROUND = 12582912f;
    static final int ROUND_BITS = Float.floatToRawIntBits(ROUND);
    static final float E0 = 1.9875691500e-4f, E1 = 1.3981999507e-3f, E2 = 8.3334519073e-3f;
    static final float E3 = 4.1665795894e-2f, E4 = 1.6666665459e-1f, E5 = 5.0000001201e-1f;

    /** The engine's {@code VExp.exp} as it was then, with the clamp. */
    static FloatVector exp(FloatVector x) {
        VectorMask<Float> under = x.compare(VectorOperators.LT, MIN_ARG);
        FloatVector xc = x.blend(MIN_ARG, under);
        FloatVector t = xc.mul(LOG2E).add(ROUND), n = t.sub(ROUND);
        FloatVector r = xc.sub(n.mul(LN2_HI)).sub(n.mul(LN2_LO));
        FloatVector p = r.fma(E0, E1);
        p = p.fma(r, FloatVector.broadcast(SP, E2));
        p = p.fma(r, FloatVector.broadcast(SP, E3));
        p = p.fma(r, FloatVector.broadcast(SP, E4));
        p = p.fma(r, FloatVector.broadcast(SP, E5));
        FloatVector y = p.mul(r).fma(r, r).add(1f);
        IntVector e = ((IntVector) t.reinterpretAsInts()).sub(ROUND_BITS - 127).lanewise(VectorOperators.LSHL, 23);
        return y.mul(e.reinterpretAsFloats()).blend(0f, under);
    }

    static void gelu(float[] out, float[] x, int n, boolean estrin) {
        gelu(out, x, n, estrin, false);
    }

    /** {@code library}: the JDK's vector exp ({@code lanewise(EXP)}) instead of the engine's inlined one. */
    static void gelu(float[] out, float[] x, int n, boolean estrin, boolean library) {
        for (int i = 0; i < n; i += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, i);
            FloatVector a = v.mul(INV_SQRT2).abs();
            FloatVector t = FloatVector.broadcast(SP, 1f).div(a.fma(0.5f, 1f));
            FloatVector p;
            if (estrin) {
                FloatVector t2 = t.mul(t), t4 = t2.mul(t2), t8 = t4.mul(t4);
                FloatVector q0 = t.fma(P1, P0), q1 = t.fma(P3, P2), q2 = t.fma(P5, P4), q3 = t.fma(P7, P6);
                p = q3.fma(t2, q2).fma(t4, q1.fma(t2, q0)).add(t.fma(P9, P8).mul(t8));
            } else {
                p = t.fma(P9, P8);
                for (float c : new float[] {P7, P6, P5, P4, P3, P2, P1, P0}) p = p.fma(t, FloatVector.broadcast(SP, c));
            }
            FloatVector arg = p.sub(a.mul(a));
            FloatVector e = t.mul(library ? arg.lanewise(VectorOperators.EXP) : exp(arg));
            FloatVector f = e.neg().add(2f).blend(e, v.compare(VectorOperators.LT, 0f));
            v.mul(0.5f).mul(f).intoArray(out, i);
        }
    }

    /** The op's parts in loops of their own: 0 the exponential, 1 the division, 2 Horner's nine FMAs. */
    static void part(float[] out, float[] x, int n, int which) {
        for (int i = 0; i < n; i += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, i), y;
            if (which == 0) y = exp(v.abs().neg());
            else if (which == 1) y = FloatVector.broadcast(SP, 1f).div(v.abs().add(1f));
            else {
                y = v.fma(P9, P8);
                for (float c : new float[] {P7, P6, P5, P4, P3, P2, P1, P0}) y = y.fma(v, FloatVector.broadcast(SP, c));
            }
            y.intoArray(out, i);
        }
    }

    /** erfc in double: the series of erf below 3, the continued fraction above. */
    static double erfc(double z) {
        if (z < 0) return 2 - erfc(-z);
        if (z < 3) {
            double sum = 0, term = z;
            for (int n = 0; n < 200; n++) {
                sum += term / (2 * n + 1);
                term *= -z * z / (n + 1);
            }
            return 1 - 2 / Math.sqrt(Math.PI) * sum;
        }
        double f = 0;
        for (int k = 60; k >= 1; k--) f = k / 2.0 / (z + f);
        return Math.exp(-z * z) / Math.sqrt(Math.PI) / (z + f);
    }

    public static void main(String[] args) {
        int m = 200_000;
        float[] xs = new float[m], got = new float[m];
        for (int i = 0; i < m; i++) xs[i] = (float) (-12 + 24.0 * i / m);
        for (boolean estrin : new boolean[] {false, true}) {
            gelu(got, xs, m, estrin);
            double worst = 0;
            for (int i = 0; i < m; i++) {
                double v = xs[i], w = 0.5 * v * erfc(-v / Math.sqrt(2));
                worst = Math.max(worst, Math.abs(got[i] - w) / (1e-6 * Math.abs(w) + 1e-7));
            }
            System.out.printf("%-7s worst error / test bound %.3f%n", estrin ? "estrin" : "horner", worst);
        }
        int n = 1536 * 16; // the FFN width of MiniLM, 16 rows
        float[] x = new float[n], y = new float[n];
        java.util.Random r = new java.util.Random(1);
        for (int i = 0; i < n; i++) x[i] = (float) r.nextGaussian();
        for (int round = 0; round < 5; round++)
            for (boolean estrin : new boolean[] {false, true}) {
                long t0 = System.nanoTime();
                for (int i = 0; i < 1000; i++) gelu(y, x, n, estrin);
                double ns = (System.nanoTime() - t0) / 1000.0 / (n / SP.length());
                if (round >= 2) System.out.printf("round %d %-7s %.1f ns per %d-float vector%n", round, estrin ? "estrin" : "horner", ns, SP.length());
            }
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 1000; i++) gelu(y, x, n, true, true);
            double ns = (System.nanoTime() - t0) / 1000.0 / (n / SP.length());
            if (round == 2) System.out.printf("estrin with the JDK's vector exp: %.1f ns per vector%n", ns);
        }
        String[] parts = {"exp", "division", "9 FMAs"};
        for (int round = 0; round < 3; round++)
            for (int which = 0; which < 3; which++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < 1000; i++) part(y, x, n, which);
                double ns = (System.nanoTime() - t0) / 1000.0 / (n / SP.length());
                if (round == 2) System.out.printf("alone: %-8s %.1f ns per vector%n", parts[which], ns);
            }
    }
}
