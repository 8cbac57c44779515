package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

/**
 * {@link Lanes#sum} is exactly the rotate-and-add tree its javadoc names, written here as scalar float code: bitwise
 * equality over many random vectors whose lanes span 12 orders of magnitude (where another order gives other bits).
 */
class LanesTest {
    @Test
    void sumIsTheFixedTreeOrder() {
        int n = FloatVector.SPECIES_PREFERRED.length();
        SplittableRandom rnd = new SplittableRandom(5);
        float[] a = new float[n];
        int differsFromSequential = 0;
        for (int t = 0; t < 20_000; t++) {
            for (int i = 0; i < n; i++) a[i] = (float) ((rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(-6, 6)));
            float got = Lanes.sum(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, a, 0));
            assertEquals(Float.floatToRawIntBits(tree(a, 0, n)), Float.floatToRawIntBits(got), "trial " + t);
            // the form for accumulators kept in memory: the same bits
            float[] m = new float[n + 1];
            System.arraycopy(a, 0, m, 1, n);
            assertEquals(Float.floatToRawIntBits(got), Float.floatToRawIntBits(Lanes.sum(m, 1)), "memory, trial " + t);
            float seq = 0;
            for (float v : a) seq += v;
            if (seq != got) differsFromSequential++;
        }
        // the order matters for these inputs (else the test could not tell orders apart)
        if (n > 2) org.junit.jupiter.api.Assertions.assertTrue(differsFromSequential > 0);
    }

    @Test
    void maxIsTheLargestLane() {
        int n = FloatVector.SPECIES_PREFERRED.length();
        SplittableRandom rnd = new SplittableRandom(6);
        float[] a = new float[n];
        for (int t = 0; t < 20_000; t++) {
            float want = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) {
                a[i] = rnd.nextInt(10) == 0
                        ? Float.NEGATIVE_INFINITY
                        : (float) ((rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(-6, 6)));
                want = Math.max(want, a[i]);
            }
            assertEquals(want, Lanes.max(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, a, 0)), "trial " + t);
            assertEquals(want, Lanes.max(a.clone(), 0), "memory, trial " + t);
        }
        // NaN lanes: the memory form takes the same lanes as the vector form, bitwise
        for (int t = 0; t < 2_000; t++) {
            for (int i = 0; i < n; i++) a[i] = rnd.nextInt(4) == 0 ? Float.NaN : (float) rnd.nextDouble();
            float v = Lanes.max(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, a, 0));
            assertEquals(Float.floatToRawIntBits(v), Float.floatToRawIntBits(Lanes.max(a.clone(), 0)), "NaN " + t);
        }
        java.util.Arrays.fill(a, 1f);
        a[n - 1] = Float.POSITIVE_INFINITY;
        assertEquals(Float.POSITIVE_INFINITY, Lanes.max(FloatVector.fromArray(FloatVector.SPECIES_PREFERRED, a, 0)));
    }

    /** Lane {@code lane} after rotating by n/2, n/4, ..., 1 and adding each time, in scalar float code. */
    static float tree(float[] a, int lane, int n) {
        float[] v = a.clone();
        for (int k = n / 2; k >= 1; k /= 2) {
            float[] w = new float[n];
            for (int i = 0; i < n; i++) w[i] = v[i] + v[(i + k) % n];
            v = w;
        }
        return v[lane];
    }
}
