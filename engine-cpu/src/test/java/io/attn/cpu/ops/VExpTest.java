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
}
