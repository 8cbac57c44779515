package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

/** The inline softmax exp against {@link StrictMath#exp} in double. */
class VExpTest {
    @Test
    void withinTwoUlpOnTheWholeNonPositiveRange() {
        int vl = FloatVector.SPECIES_PREFERRED.length();
        float[] x = new float[vl], y = new float[vl];
        double worst = 0;
        // dense sweep of [-87.3, 0] plus the exact edges
        for (int i = 0; i <= 2_000_000; i += vl) {
            for (int l = 0; l < vl; l++) x[l] = (float) (-87.3 * (i + l) / 2_000_000);
            VExp.expNonPositive(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                    .intoArray(y, 0);
            for (int l = 0; l < vl; l++) {
                double want = StrictMath.exp(x[l]);
                worst = Math.max(worst, Math.abs(y[l] - want) / Math.ulp((float) want));
            }
        }
        // 2 ulp is ~2.4e-7 relative: far inside the softmax's 1e-5 budget
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
        x[0] = Float.NEGATIVE_INFINITY;
        x[1] = -100f;
        x[2] = 0f;
        x[3] = Float.NaN;
        VExp.expNonPositive(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                .intoArray(y, 0);
        assertEquals(0f, y[0]);
        assertEquals(0f, y[1]);
        assertEquals(1f, y[2]);
        assertTrue(Float.isNaN(y[3]));
    }

    @Test
    void exp2WithinTwoUlpFromMinus125To64() {
        int vl = FloatVector.SPECIES_PREFERRED.length();
        float[] x = new float[vl], y = new float[vl];
        double worst = 0;
        // dense sweep of [-125, 64]: the attention fast path's arguments are s - m <= 16 (base-2 units)
        for (int i = 0; i <= 4_000_000; i += vl) {
            for (int l = 0; l < vl; l++) x[l] = (float) (-125 + 189.0 * (i + l) / 4_000_000);
            VExp.exp2(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                    .intoArray(y, 0);
            for (int l = 0; l < vl; l++) {
                double want = StrictMath.pow(2, x[l]);
                worst = Math.max(worst, Math.abs(y[l] - want) / Math.ulp((float) want));
            }
        }
        // the fitted degree-6 polynomial is good to 1e-7 relative; float Horner rounding adds about 1 ulp
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
        x[0] = Float.NEGATIVE_INFINITY;
        x[1] = -126f;
        x[2] = 0f;
        x[3] = Float.NaN;
        VExp.exp2(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0)).intoArray(y, 0);
        assertEquals(0f, y[0]);
        assertEquals(0f, y[1]); // below -125 flushes to 0 (2^-126 is where normal floats end)
        assertEquals(1f, y[2]);
        assertTrue(Float.isNaN(y[3]));
        // NaNs with payloads (the payload must not leak into the exponent and make a number)
        x[0] = Float.intBitsToFloat(0x7fc00001);
        x[1] = Float.intBitsToFloat(0xffc000ff);
        x[2] = Float.intBitsToFloat(0x7f800001);
        x[3] = Float.intBitsToFloat(0x7fffffff);
        VExp.exp2(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0)).intoArray(y, 0);
        for (int l = 0; l < 4; l++)
            assertTrue(Float.isNaN(y[l]), "NaN payload " + Integer.toHexString(Float.floatToRawIntBits(x[l])));
        x[0] = 16f;
        x[1] = -1f;
        x[2] = 10.5f;
        x[3] = -124.75f;
        VExp.exp2(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0)).intoArray(y, 0);
        assertEquals(65536f, y[0]);
        assertEquals(0.5f, y[1]);
        assertEquals((float) StrictMath.pow(2, 10.5), y[2], Math.ulp(y[2]));
        assertEquals((float) StrictMath.pow(2, -124.75), y[3], 2 * Math.ulp(y[3]));
    }

    @Test
    void exp2FiniteWithinThreeUlpFromMinus126To64() {
        int vl = FloatVector.SPECIES_PREFERRED.length();
        float[] x = new float[vl], y = new float[vl];
        double worst = 0;
        // dense sweep of [-126, 64] (normal results); the fast path's arguments are s - m <= 16
        for (int i = 0; i <= 4_000_000; i += vl) {
            for (int l = 0; l < vl; l++) x[l] = (float) (-126 + 190.0 * (i + l) / 4_000_000);
            VExp.exp2Finite(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                    .intoArray(y, 0);
            for (int l = 0; l < vl; l++) {
                double want = StrictMath.pow(2, x[l]);
                if (want < 0x1p-126) continue; // a denormal result: 2^f times 2^-126 rounds to fewer bits
                worst = Math.max(worst, Math.abs(y[l] - want) / Math.ulp((float) want));
            }
        }
        // the degree-5 fit is good to 9.1e-8 relative (0.8-1.5 ulp, depending on where in its binade the result
        // falls); Horner's float rounding adds about 1 ulp: measured 2.02. 3 ulp (3.6e-7 relative at worst) is far
        // inside the attention's error budget, and a wrong coefficient or a lost ulp of range reduction exceeds it
        assertTrue(worst <= 3, "worst error " + worst + " ulp");
        assertTrue(worst > 0.5, "the degree-5 polynomial is not exact: " + worst + " ulp");
        // flush below 2^-126, any finite argument however negative; NaN stays NaN, payloads included
        float[] xs = {-127.5f, -1000f, -1e30f, -Float.MAX_VALUE, -0x1p22f, -0x1p23f - 3f, Float.NaN, 0f};
        for (int i = 0; i < xs.length; i++) x[i % vl] = xs[i];
        for (int from = 0; from < xs.length; from += vl) {
            for (int l = 0; l < vl; l++) x[l] = xs[(from + l) % xs.length];
            VExp.exp2Finite(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                    .intoArray(y, 0);
            for (int l = 0; l < vl && from + l < xs.length; l++) {
                float want = Float.isNaN(x[l]) ? Float.NaN : x[l] == 0f ? 1f : 0f;
                assertEquals(want, y[l], "2^" + x[l]);
            }
        }
        x[0] = Float.intBitsToFloat(0x7fc00001);
        x[1] = Float.intBitsToFloat(0xffc000ff);
        x[2] = Float.intBitsToFloat(0x7f800001);
        x[3] = Float.intBitsToFloat(0xffffffff);
        VExp.exp2Finite(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                .intoArray(y, 0);
        for (int l = 0; l < 4; l++)
            assertTrue(Float.isNaN(y[l]), "NaN payload " + Integer.toHexString(Float.floatToRawIntBits(x[l])));
        x[0] = 16f;
        x[1] = -1f;
        x[2] = 64f;
        x[3] = -126f;
        VExp.exp2Finite(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, x, 0))
                .intoArray(y, 0);
        assertEquals(65536f, y[0]);
        assertEquals(0.5f, y[1]);
        assertEquals(0x1p64f, y[2]);
        assertEquals(0x1p-126f, y[3]);
    }
}
