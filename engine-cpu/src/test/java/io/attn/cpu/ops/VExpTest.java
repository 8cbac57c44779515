package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.DoubleUnaryOperator;
import java.util.function.UnaryOperator;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

/** The inline softmax exponentials against {@link StrictMath#exp} and {@link StrictMath#pow} in double. */
class VExpTest {
    private static final int VL = FloatVector.SPECIES_PREFERRED.length();

    /**
     * The largest error in ulp of {@code f} against {@code want} over {@code n + 1} evenly spaced arguments in {@code
     * [from, to]}, skipping results under {@code minResult} (denormals, where a flush to 0 is intended).
     */
    private static double worstUlp(
            UnaryOperator<FloatVector> f, DoubleUnaryOperator want, double from, double to, int n, double minResult) {
        float[] x = new float[VL], y = new float[VL];
        double worst = 0;
        for (int i = 0; i <= n; i += VL) {
            for (int l = 0; l < VL; l++) x[l] = (float) (from + (to - from) * (i + l) / n);
            f.apply(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0)).intoArray(y, 0);
            for (int l = 0; l < VL; l++) {
                double w = want.applyAsDouble(x[l]);
                if (w >= minResult) worst = Math.max(worst, Math.abs(y[l] - w) / Math.ulp((float) w));
            }
        }
        return worst;
    }

    /** {@code f} of the given arguments (at most one vector's worth). */
    private static float[] apply(UnaryOperator<FloatVector> f, float... args) {
        float[] x = new float[VL], y = new float[VL];
        System.arraycopy(args, 0, x, 0, args.length);
        f.apply(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0)).intoArray(y, 0);
        return java.util.Arrays.copyOf(y, args.length);
    }

    /** NaNs with payloads: the payload must not leak into the exponent and make a number. */
    private static void nanPayloadsStayNaN(UnaryOperator<FloatVector> f) {
        int[] bits = {0x7fc00001, 0xffc000ff, 0x7f800001, 0x7fffffff, 0xffffffff};
        for (int b : bits) {
            float y = apply(f, Float.intBitsToFloat(b))[0];
            assertTrue(Float.isNaN(y), "NaN payload " + Integer.toHexString(b));
        }
    }

    @Test
    void withinTwoUlpOnTheWholeNonPositiveRange() {
        double worst = worstUlp(VExp::expNonPositive, StrictMath::exp, -87.3, 0, 2_000_000, 0);
        // 2 ulp is ~2.4e-7 relative: far inside the softmax's 1e-5 budget
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
        float[] y = apply(VExp::expNonPositive, Float.NEGATIVE_INFINITY, -100f, 0f, Float.NaN);
        assertEquals(0f, y[0]);
        assertEquals(0f, y[1]);
        assertEquals(1f, y[2]);
        assertTrue(Float.isNaN(y[3]));
        // arguments are not clamped before the polynomial: every one below the range must still give exactly 0
        for (float v : apply(VExp::expNonPositive, -87.4f, -1e6f, -1e30f, -Float.MAX_VALUE)) assertEquals(0f, v);
    }

    /** {@link VExp#exp2Sub} on one vector of arguments with {@code sub = 0} ({@code x - 0} is {@code x}, NaN too). */
    private static FloatVector exp2(FloatVector v) {
        float[] a = v.toArray();
        VExp.exp2Sub(a, 0, VL, 0f, new float[VL], 0, false);
        return FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, a, 0);
    }

    @Test
    void exp2SubStoresPowersAndAddsThemToTheAccumulator() {
        int n = 5 * VL;
        float sub = 3.5f;
        float[] x = new float[n + 3];
        java.util.Random rnd = new java.util.Random(7);
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextDouble() * 40 - 30);
        for (boolean add : new boolean[] {false, true}) {
            float[] a = x.clone();
            float[] accv = new float[VL + 2];
            for (int l = 0; l < accv.length; l++) accv[l] = l;
            VExp.exp2Sub(a, 2, n, sub, accv, 1, add);
            assertEquals(0f, accv[0]);
            assertEquals(VL + 1, accv[VL + 1]);
            double total = 0;
            for (int i = 0; i < x.length; i++) {
                if (i < 2 || i >= 2 + n) {
                    assertEquals(x[i], a[i], "outside the range: untouched"); // bitwise
                    continue;
                }
                double p = StrictMath.pow(2, x[i] - sub); // the argument rounded to float, as the op computes it
                assertEquals(p, a[i], 2 * Math.ulp((float) p), "2^(x - sub) at " + i);
            }
            for (int l = 0; l < VL; l++) {
                double lane = add ? l + 1 : 0;
                for (int v = 0; v < n; v += VL) lane += StrictMath.pow(2, x[2 + v + l] - sub);
                assertEquals(lane, accv[1 + l], 1e-5 * lane, "add " + add + ", lane " + l);
                total += lane;
            }
            // the lanes' sum in the fixed order: the scalar form is the vector form, bitwise
            float vector = Lanes.sum(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, accv, 1));
            float scalar = Lanes.sum(accv, 1);
            assertEquals(Float.floatToRawIntBits(vector), Float.floatToRawIntBits(scalar));
            assertEquals(total, scalar, 1e-5 * total);
        }
    }

    @Test
    void exp2WithinTwoUlpFromMinus125To64() {
        // dense sweep of [-125, 64]: the attention fast path's arguments are s - m <= 16 (base-2 units)
        double worst = worstUlp(VExpTest::exp2, x -> StrictMath.pow(2, x), -125, 64, 4_000_000, 0);
        // the fitted degree-6 polynomial is good to 1e-7 relative; float Horner rounding adds about 1 ulp
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
        float[] y = apply(VExpTest::exp2, Float.NEGATIVE_INFINITY, -126f, 0f, Float.NaN);
        assertEquals(0f, y[0]);
        assertEquals(0f, y[1]); // below -125 flushes to 0 (2^-126 is where normal floats end)
        assertEquals(1f, y[2]);
        assertTrue(Float.isNaN(y[3]));
        nanPayloadsStayNaN(VExpTest::exp2);
        for (float v : apply(VExpTest::exp2, -125.01f, -5e6f, -1e30f, -Float.MAX_VALUE)) assertEquals(0f, v);
        y = apply(VExpTest::exp2, 16f, -1f, 10.5f, -124.75f);
        assertEquals(65536f, y[0]);
        assertEquals(0.5f, y[1]);
        assertEquals((float) StrictMath.pow(2, 10.5), y[2], Math.ulp(y[2]));
        assertEquals((float) StrictMath.pow(2, -124.75), y[3], 2 * Math.ulp(y[3]));
    }
}
