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
 * QMATMUL's int32 accumulators against the integer reference, exactly, at embedding shapes (K 384, one chunk, and
 * 1536, past the kernel's chunks of up to 512), with the full int8 range, zero points and row groups; the float results
 * bit for bit, with and without the accumulators returned (the two ways of scaling them).
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
            {65, 384, 64},
            // K of exactly one deep chunk (512 with all zero points 0) and past it (two chunks of 512 or of 476 with
            // zero points of +-10), rows in two balanced blocks (250: 126 + 124), a partial last panel
            {66, 512, 64},
            {70, 600, 85},
            {250, 1100, 40}
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

    /**
     * The chunk depth at its bounds: every product at its extreme (activations at the end of the range, weights at
     * -128 with zero point 0, so that a 512-deep chunk sums to -16,711,680, just inside 2^24; weights at 127 with zero
     * point -128, |w - z| = 255, so that chunks are 258 deep), K past several chunks, compared with the integer
     * reference exactly.
     */
    @Test
    void extremeProductsStayExactAtTheChunkBounds() {
        try (Parallel par = new Parallel(2)) {
            for (int variant = 0; variant < 2; variant++) {
                int m = 70, k = 1536, n = 64;
                byte wv = variant == 0 ? (byte) -128 : (byte) 127, zv = variant == 0 ? 0 : (byte) -128;
                float[] x = new float[m * k];
                for (int i = 0; i < x.length; i++) x[i] = 1f; // one value: the range [0, 1], zero point 0, q - z = 255
                byte[] w = new byte[k * n];
                java.util.Arrays.fill(w, wv);
                var p = new OpParams.QMatMul(Tensor.ofInt8(w, k, n), new float[] {0.5f}, new byte[] {zv}, null);
                assertEquals(variant == 0 ? 512 : 258, QMatMul.chunk(p, QMatMul.Packed.of(p.weight())));
                float[] rowScale = new float[m];
                long[] want = Reference.qmatmulAccumulators(p, x, rowScale);
                assertEquals((long) k * 255 * (wv - zv), want[0], "the reference's sum");
                float[] out = new float[m * n];
                int[] acc = new int[m * n];
                QMatMul.run(par, p, x, out, m, acc);
                for (int i = 0; i < acc.length; i++) assertEquals(want[i], acc[i], "acc " + i);
                float[] expect = new float[m * n];
                for (int i = 0; i < expect.length; i++) expect[i] = (float) want[i] * (rowScale[i / n] * 0.5f);
                float[] out2 = new float[m * n];
                QMatMul.run(par, p, x, out2, m, null);
                assertArrayEquals(expect, out2, 0f);
            }
        }
    }

    /** K = 0 (a probe's or a test's product; graphs have K >= 1): zeros on both paths, whatever out held. */
    @Test
    void emptyKGivesZeros() {
        try (Parallel par = new Parallel(2)) {
            for (int m : new int[] {8, 70}) {
                var p = new OpParams.QMatMul(Tensor.ofInt8(new byte[0], 0, 8), new float[] {1f}, new byte[] {0}, null);
                for (boolean withAcc : new boolean[] {false, true}) {
                    float[] out = new float[m * 8];
                    java.util.Arrays.fill(out, 7f);
                    int[] acc = withAcc ? new int[m * 8] : null;
                    if (withAcc) java.util.Arrays.fill(acc, 5);
                    QMatMul.run(par, p, new float[0], out, m, acc);
                    assertArrayEquals(new float[m * 8], out, 0f, m + " rows");
                    if (withAcc) assertArrayEquals(new int[m * 8], acc, m + " rows");
                }
            }
        }
    }
}
