package io.attn.cpu.ops;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * An inline vector {@code exp} for the softmax, whose arguments are {@code x - max <= 0}. Cephes {@code expf}:
 * {@code x = n ln2 + r} with {@code |r| <= ln2/2} (Cody-Waite, two-part ln2), a degree-7 polynomial for {@code e^r},
 * and {@code 2^n} built in the exponent bits; about 1 ulp. Below {@code -87.34} (where {@code e^x} is under the smallest
 * normal float) it returns 0, so {@code exp(-inf) = 0} for masked scores; NaN stays NaN. Inlined by C2, it avoids a
 * call to the library routine per vector.
 */
final class VExp {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final float LOG2E = 1.44269504088896341f;
    private static final float LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;
    private static final float MIN_ARG = -87.33654f;
    private static final float ROUND = 12582912f; // 1.5 * 2^23: adding and subtracting it rounds to an integer
    private static final int ROUND_BITS = Float.floatToRawIntBits(ROUND);
    private static final float P0 = 1.9875691500e-4f, P1 = 1.3981999507e-3f, P2 = 8.3334519073e-3f;
    private static final float P3 = 4.1665795894e-2f, P4 = 1.6666665459e-1f, P5 = 5.0000001201e-1f;

    private VExp() {}

    /** {@code e^x} for {@code x <= 0} (larger arguments are not supported); {@code x} of the preferred species. */
    static FloatVector expNonPositive(FloatVector x) {
        return exp(x);
    }

    /**
     * {@code e^x} for {@code x <= 88} (where {@code e^x} is still a finite float; nothing clamps larger arguments): the
     * same algorithm, whose range reduction and {@code 2^n} hold for positive {@code n} up to 127 as well.
     */
    static FloatVector exp(FloatVector x) {
        // the integer n read from the rounding constant's mantissa instead of an F2I conversion (Java's saturation
        // rules make that slow on x86). Arguments below MIN_ARG are not clamped: whatever they compute (garbage bits,
        // NaN for -inf) the final blend replaces with 0, so the clamp's blend is saved (exp2 below: faster on Zen 1,
        // bitwise the same: benchmarks/probes/ExpProbe.java)
        VectorMask<Float> under = x.compare(VectorOperators.LT, MIN_ARG); // false for NaN: NaN stays NaN
        FloatVector t = x.mul(LOG2E).add(ROUND); // n + 1.5 * 2^23: n sits in the low mantissa bits
        FloatVector n = t.sub(ROUND);
        // n * LN2_HI is exact (LN2_HI has 9 significant bits, |n| <= 127)
        FloatVector r = x.sub(n.mul(LN2_HI)).sub(n.mul(LN2_LO));
        FloatVector p = r.fma(P0, P1);
        p = p.fma(r, FloatVector.broadcast(SP, P2));
        p = p.fma(r, FloatVector.broadcast(SP, P3));
        p = p.fma(r, FloatVector.broadcast(SP, P4));
        p = p.fma(r, FloatVector.broadcast(SP, P5));
        FloatVector y = p.mul(r).fma(r, r).add(1f);
        // bits(t) - bits(ROUND) = n; (n + 127) << 23 is 2^n as float bits
        IntVector e = ((IntVector) t.reinterpretAsInts()).sub(ROUND_BITS - 127).lanewise(VectorOperators.LSHL, 23);
        return y.mul(e.reinterpretAsFloats()).blend(0f, under);
    }

    private static final float X2_MIN = -125f;
    private static final float Q1 = 0.6931471824645996f, Q2 = 0.24022647738456726f, Q3 = 0.055503323674201965f;
    private static final float Q4 = 0.00961843691766262f, Q5 = 0.0013398875016719103f, Q6 = 0.00015353360504377633f;

    /**
     * {@code a[o + c] = 2^(a[o + c] - sub)} for {@code c < n} ({@code n} a multiple of the vector length), each vector
     * of results added lane by lane to an accumulator stored at {@code accv[ao..]} (one vector): it starts from what is
     * there when {@code add}, else from 0 (the row's lane sums, which {@link Lanes#sum(float[], int)} reduces in the
     * fixed order). {@code 2^x} for {@code x <= 64}: {@code x = n + f} with {@code n} the nearest integer and {@code
     * |f| <= 1/2}, a degree-6 polynomial for {@code 2^f} (fitted for relative error: 1e-7, under 2 ulp) and {@code 2^n}
     * added to its exponent bits. Below {@code -125} it gives 0 (so {@code 2^-inf = 0}); NaN stays NaN.
     *
     * <p>A loop over arrays, not a function of one vector, and the accumulator leaves through memory, not as a value: no
     * vector crosses a call. A call that takes or returns a vector and that C2 declines to inline (a large caller's node
     * budget spent, {@code NodeCountInliningCutoff}; a call site it profiled as cold; a callee already compiled large)
     * gets the vector as a heap object, and a loop's accumulator handed to such a call is boxed on every iteration: the
     * windowed attention of a ModernBERT pass ran its softmax that way in a steady state (JFR allocation samples: a few
     * hundred MB/s of boxed vectors in this exponential and the {@link Lanes#sum} after it, 2026-12-06), depending on
     * the order in which methods happened to compile. Inlined or not, this method boxes nothing.
     */
    static void exp2Sub(float[] a, int o, int n, float sub, float[] accv, int ao, boolean add) {
        FloatVector acc = add ? FloatVector.fromArray(SP, accv, ao) : FloatVector.zero(SP);
        for (int c = 0; c < n; c += SP.length()) {
            FloatVector x = FloatVector.fromArray(SP, a, o + c).sub(sub);
            // not clamped: the final blend replaces what arguments below X2_MIN compute (see exp)
            VectorMask<Float> under = x.compare(VectorOperators.LT, X2_MIN); // false for NaN
            FloatVector t = x.add(ROUND); // n + 1.5 * 2^23: n sits in the low mantissa bits
            FloatVector f = x.sub(t.sub(ROUND));
            FloatVector p = f.fma(Q6, Q5);
            p = p.fma(f, FloatVector.broadcast(SP, Q4));
            p = p.fma(f, FloatVector.broadcast(SP, Q3));
            p = p.fma(f, FloatVector.broadcast(SP, Q2));
            p = p.fma(f, FloatVector.broadcast(SP, Q1));
            p = p.fma(f, FloatVector.broadcast(SP, 1f));
            // bits(t) << 23 is n << 23 (the constant's own bits shift out); + 127 << 23 makes it the float 2^n. A
            // multiply (exact: a power of two, results stay normal for n >= -125), not an add to p's exponent bits,
            // so that a NaN stays NaN whatever its payload (shifted into the exponent, a payload would make a number)
            IntVector e = ((IntVector) t.reinterpretAsInts())
                    .lanewise(VectorOperators.LSHL, 23)
                    .add(127 << 23);
            FloatVector y = p.mul(e.reinterpretAsFloats()).blend(0f, under);
            y.intoArray(a, o + c);
            acc = acc.add(y);
        }
        acc.intoArray(accv, ao);
    }
}
