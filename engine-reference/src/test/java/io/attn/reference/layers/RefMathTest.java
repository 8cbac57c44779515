package io.attn.reference.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Hand-worked and libm-sourced checks of the reference's scalar and row functions. */
class RefMathTest {

    // Expected erf/erfc values were printed by CPython's math.erf/math.erfc (libm), to 16-17 significant digits.
    // Our series/continued fraction is accurate to ~1e-15 absolute; 2e-15 leaves room for rounding, and the
    // erfc tail values are checked relatively (1e-13) since they are tiny.
    @Test
    void erfMatchesLibmValues() {
        double[][] cases = {
            {0.1, 0.1124629160182849},
            {0.3, 0.3286267594591274},
            {0.5, 0.5204998778130465},
            {1.0, 0.8427007929497149},
            {1.5, 0.9661051464753108},
            {2.0, 0.9953222650189527},
            {2.4999, 0.9995928300996666},
            {2.5, 0.999593047982555},
            {3.5, 0.9999992569016276},
        };
        for (double[] c : cases) {
            assertEquals(c[1], RefMath.erf(c[0]), 2e-15, "erf(" + c[0] + ")");
            assertEquals(-c[1], RefMath.erf(-c[0]), 2e-15, "erf(-" + c[0] + ")");
        }
        assertEquals(0.0, RefMath.erf(0.0));
        assertEquals(1.0, RefMath.erf(40.0));
    }

    @Test
    void erfcKeepsRelativeAccuracyInTheTail() {
        assertEquals(0.4795001221869535, RefMath.erfc(0.5), 2e-15);
        assertEquals(1.842700792949715, RefMath.erfc(-1.0), 2e-15);
        assertEquals(1.0, RefMath.erfc(2.5) / 0.0004069520174449589, 1e-13);
        assertEquals(1.0, RefMath.erfc(3.0) / 2.2090496998585438e-05, 1e-13);
        assertEquals(1.0, RefMath.erfc(4.0) / 1.541725790028002e-08, 1e-13);
        assertEquals(1.0, RefMath.erfc(5.0) / 1.5374597944280351e-12, 1e-13);
    }

    @Test
    void geluIsXTimesNormalCdf() {
        // gelu(x) = x * Phi(x); Phi(1) = 0.8413447460685429, Phi(-1) = 0.15865525393145707 (libm via CPython).
        assertEquals(0.8413447460685429, RefMath.gelu(1.0), 1e-15);
        assertEquals(-0.15865525393145707, RefMath.gelu(-1.0), 1e-15);
        // -1.5 erfc(3/sqrt2) via libm; our erfc(2.12) is 1 - erf (absolute error ~1e-16), so compare relatively
        assertEquals(1.0, RefMath.gelu(-3.0) / -0.004049694094890287, 1e-13);
        // deep tail: relative accuracy kept thanks to erfc
        assertEquals(1.0, RefMath.gelu(-10.0) / -7.619853024160593e-23, 1e-12);
        assertEquals(0.0, RefMath.gelu(0.0));
        assertEquals(5.0, RefMath.gelu(5.0), 1e-5); // Phi(5) = 1 - 2.9e-7
    }

    @Test
    void layerNormOfOneTwoThree() {
        // mean 2, biased variance 2/3: y = (x - 2) / sqrt(2/3 + 1e-5) = [-k, 0, k], k = 1.2247356859083902
        double k = 1.2247356859083902;
        DTensor x = new DTensor(new int[] {1, 3}, new double[] {1, 2, 3});
        DTensor y = RefMath.layerNorm(x, null, null, 1e-5);
        assertArrayEquals(new double[] {-k, 0, k}, y.data(), 1e-15);
        // affine: w = [2, 1, 0.5], b = [0, 1, -1] -> [-2k, 1, k/2 - 1]
        Tensor w = Tensor.of(new float[] {2, 1, 0.5f}, 3);
        Tensor b = Tensor.of(new float[] {0, 1, -1}, 3);
        DTensor z = RefMath.layerNorm(x, w, b, 1e-5);
        assertArrayEquals(new double[] {-2 * k, 1, k / 2 - 1}, z.data(), 1e-15);
    }

    @Test
    void linearByHand() {
        // W = [[1,2],[3,4],[0,-1]], b = [1,-1,0.5], x = [1,1] -> [4, 6, -0.5]
        Tensor w = Tensor.of(new float[] {1, 2, 3, 4, 0, -1}, 3, 2);
        Tensor b = Tensor.of(new float[] {1, -1, 0.5f}, 3);
        DTensor y = RefMath.linear(new DTensor(new int[] {1, 1, 2}, new double[] {1, 1}), w, b);
        assertArrayEquals(new int[] {1, 1, 3}, y.shape());
        assertArrayEquals(new double[] {4, 6, -0.5}, y.data(), 0);
    }

    @Test
    void cosineSimilarityByHand() {
        assertEquals(0.0, RefMath.cosineSimilarity(new double[] {1, 0}, new double[] {0, 1}), 0);
        assertEquals(1.0, RefMath.cosineSimilarity(new double[] {1, 2}, new double[] {2, 4}), 1e-15);
        assertEquals(-1.0, RefMath.cosineSimilarity(new double[] {1, 2}, new double[] {-1, -2}), 1e-15);
        assertEquals(1.0 / Math.sqrt(2), RefMath.cosineSimilarity(new double[] {1, 0}, new double[] {1, 1}), 1e-15);
        assertEquals(1.0, RefMath.cosineSimilarity(new double[] {0, 0}, new double[] {0, 0}));
        assertEquals(0.0, RefMath.cosineSimilarity(new double[] {0, 0}, new double[] {1, 0}));
    }
}
