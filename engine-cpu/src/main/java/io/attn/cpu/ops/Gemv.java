package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products with very few rows of A ({@code m <= MAX_M}, A not transposed) whose B is not a packed constant (a
 * layer's weight is packed once and read packed even by one row, which is faster: {@link MatMul}): packing B for one
 * call would cost as much as the product itself, so these read B in place. {@code B^T} (PyTorch Linear weights {@code (N, K)}):
 * one vectorised dot product per output; plain B {@code (K, N)}: row-wise {@code c += a[i,k] b[k,:]}. Work is split
 * over column chunks fixed by the problem size, and every output is computed by the same operations in any chunk, so
 * results do not depend on the thread count.
 */
final class Gemv {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final int MAX_M = 4;

    private Gemv() {}

    static void run(
            Parallel par,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int ao,
            float[] b,
            int bo,
            boolean transB,
            float[] c,
            int co) {
        int cols = Math.max(64, (1 << 16) / Math.max(1, k * m)); // columns per task: ~64K multiply-adds
        cols = (cols + 63) & ~63;
        int chunk = cols;
        int tasks = (n + chunk - 1) / chunk;
        par.forEach(tasks, t -> {
            int j0 = t * chunk, j1 = Math.min(n, j0 + chunk);
            if (transB) dots(m, n, k, alpha, a, ao, b, bo, c, co, j0, j1);
            else axpys(m, n, k, alpha, a, ao, b, bo, c, co, j0, j1);
        });
    }

    /** {@code c[i, j] = alpha * a[i, :] . b[j, :]} for {@code j in [j0, j1)}. */
    private static void dots(
            int m, int n, int k, float alpha, float[] a, int ao, float[] b, int bo, float[] c, int co, int j0, int j1) {
        int ub = SP.loopBound(k);
        float[] lanes = new float[SP.length()];
        for (int j = j0; j < j1; j++) {
            int br = bo + j * k;
            for (int i = 0; i < m; i++) {
                int ar = ao + i * k;
                FloatVector acc = FloatVector.zero(SP);
                int p = 0;
                for (; p < ub; p += SP.length())
                    acc = FloatVector.fromArray(SP, a, ar + p).fma(FloatVector.fromArray(SP, b, br + p), acc);
                // reduceLanes(ADD) leaves the order unspecified (interpreter and JIT differ): sum lanes in order
                acc.intoArray(lanes, 0);
                float s = 0f;
                for (float v : lanes) s += v;
                for (; p < k; p++) s = Math.fma(a[ar + p], b[br + p], s);
                c[co + i * n + j] = alpha * s;
            }
        }
    }

    /** {@code c[i, j0:j1] = sum_k (alpha a[i, k]) b[k, j0:j1]}. */
    private static void axpys(
            int m, int n, int k, float alpha, float[] a, int ao, float[] b, int bo, float[] c, int co, int j0, int j1) {
        int w = j1 - j0, ub = SP.loopBound(w);
        for (int i = 0; i < m; i++) {
            int cr = co + i * n + j0;
            Arrays.fill(c, cr, cr + w, 0f);
            for (int p = 0; p < k; p++) {
                float x = alpha * a[ao + i * k + p];
                FloatVector xv = FloatVector.broadcast(SP, x);
                int br = bo + p * n + j0;
                int j = 0;
                for (; j < ub; j += SP.length())
                    FloatVector.fromArray(SP, b, br + j)
                            .fma(xv, FloatVector.fromArray(SP, c, cr + j))
                            .intoArray(c, cr + j);
                for (; j < w; j++) c[cr + j] = Math.fma(b[br + j], x, c[cr + j]);
            }
        }
    }
}
