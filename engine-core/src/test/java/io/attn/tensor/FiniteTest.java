package io.attn.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The NaN/Inf scan finds the first bad element wherever it is: in the vectorised body or the scalar tail. */
class FiniteTest {
    @Test
    void findsTheFirstNonFiniteElementAnywhere() {
        for (int n : new int[] {0, 1, 7, 8, 33, 1000, 4099}) {
            float[] a = new float[n];
            for (int i = 0; i < n; i++) a[i] = (float) Math.sin(i) * 1e30f;
            assertEquals(-1, Finite.indexOfNonFinite(a), "n=" + n);
            assertTrue(Tensor.of(a, n).allFinite());
            for (int at : new int[] {0, n / 2, n - 1}) {
                if (n == 0) continue;
                for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
                    float[] b = a.clone();
                    b[at] = bad;
                    if (at + 1 < n) b[n - 1] = Float.NaN; // a later one does not hide the first
                    assertEquals(at, Finite.indexOfNonFinite(b), "n=" + n + " at " + at + " " + bad);
                    assertFalse(Tensor.of(b, n).allFinite());
                }
            }
        }
    }

    @Test
    void aMaskMayHoldMinusInfinityButNotNanOrPlusInfinity() {
        float[] m = new float[37];
        m[3] = Float.NEGATIVE_INFINITY;
        m[36] = Float.NEGATIVE_INFINITY;
        assertEquals(-1, Finite.indexOfNanOrPositiveInfinity(m));
        m[20] = Float.POSITIVE_INFINITY;
        assertEquals(20, Finite.indexOfNanOrPositiveInfinity(m));
        m[5] = Float.NaN;
        assertEquals(5, Finite.indexOfNanOrPositiveInfinity(m));
    }

    @Test
    void indexStringIsTheMultiIndex() {
        assertEquals("[1, 0, 3]", Tensor.zeros(2, 3, 4).indexString(15));
    }
}
