package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.cpu.Parallel;
import io.attn.graph.OpParams;
import io.attn.reference.Reference;
import io.attn.tensor.Tensor;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * QMATMUL's int32 accumulators against the integer reference, exactly, at embedding shapes (K 384 and 1536, past the
 * kernel's 256-deep chunks), with the full int8 range, zero points and row groups; the float results bit for bit, with
 * and without the accumulators returned (the two ways of scaling them).
 */
class QMatMulTest {
    @Test
    void accumulatorsAreExactAtEmbeddingShapes() {
        Random rnd = new Random(37);
        // 104 and 85 columns: a last block of 40 / 21, whose last panel (of 32 / 16 at 512 / 256 bits) is partial
        // (the panel path: a scalar tail reading the zero points from the panel's offset; the direct path: the packed
        // block's zero columns past N); 25 and 8 rows: a last row tile of 1 or 2-5 rows
        int[][] shapes = {
            {101, 384, 384},
            {37, 1536, 384},
            {9, 384, 1536},
            {3, 257, 70},
            {487, 384, 130},
            {25, 384, 104},
            {8, 300, 85},
            // 1-4 rows (a decoding step's): the weight read directly (QMatMul.fewRows, up to 64 rows), K past 256 and
            // not a multiple
            // of it, column counts with a last pair of vectors, a last single vector and a scalar tail
            {1, 512, 2048},
            {1, 1536, 104},
            {2, 384, 85},
            {4, 257, 70},
            {1, 300, 1000},
            // 5, 6 and 11 rows (the direct path's 6-row tile, a last tile of 5 run as 6, then of 4), its limit of 64
            // rows and one past it (the panel path)
            {5, 384, 96},
            {6, 300, 70},
            {11, 384, 104},
            {64, 384, 64},
            {65, 384, 64}
        };
        try (Parallel par = new Parallel(2)) {
            for (int[] s : shapes)
                for (boolean allZero : new boolean[] {false, true}) {
                    int m = s[0], k = s[1], n = s[2];
                    float[] x = new float[m * k];
                    for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * (1 + i % 7));
                    x[5] = 40f; // an outlier, as LayerNorm outputs have
                    byte[] w = new byte[k * n];
                    for (int i = 0; i < w.length; i++) w[i] = (byte) (i % 97 == 0 ? -128 : rnd.nextInt(256) - 128);
                    float[] scale = new float[n];
                    byte[] zero = new byte[n];
                    for (int j = 0; j < n; j++) {
                        scale[j] = 0.001f + 0.01f * rnd.nextFloat();
                        zero[j] =
                                (byte) (allZero || j % 3 == 0 ? 0 : rnd.nextInt(21) - 10); // all 0: nothing subtracted
                    }
                    int[] groups = m > 3 ? new int[] {1, m - 3, 2} : null;
                    var p = new OpParams.QMatMul(Tensor.ofInt8(w, k, n), scale, zero, groups);
                    float[] rowScale = new float[m];
                    long[] want = Reference.qmatmulAccumulators(p, x, rowScale);
                    float[] out = new float[m * n];
                    int[] acc = new int[m * n];
                    QMatMul.run(par, p, x, out, m, acc);
                    for (int i = 0; i < acc.length; i++)
                        assertEquals(want[i], acc[i], "acc " + i + " of " + m + "x" + k + "x" + n);
                    float[] expect = new float[m * n];
                    for (int i = 0; i < expect.length; i++)
                        expect[i] = (float) want[i] * (rowScale[i / n] * p.scale(i % n));
                    assertArrayEquals(expect, out, 0f);
                    // without the accumulators asked for: the vectorized scaling, the same floats
                    float[] out2 = new float[m * n];
                    QMatMul.run(par, p, x, out2, m, null);
                    assertArrayEquals(expect, out2, 0f, m + "x" + k + "x" + n + " without accumulators");
                }
        }
    }
}
