package io.attn.cuda;

/**
 * A double-precision matrix product for the GEMM-path tests (cuBLAS through FFM, TF32, runInto), written from MATMUL's
 * definition independently of the kernels; every other op is judged by the one parity suite against {@code
 * io.attn.reference}. Arrays are row-major.
 */
final class Ref {
    private Ref() {}

    /** C (batch, m, n) = alpha op(A) op(B); B shared when {@code sharedB}. */
    static double[] matmul(
            float[] a,
            float[] b,
            int batch,
            int m,
            int n,
            int k,
            boolean ta,
            boolean tb,
            float alpha,
            boolean sharedB) {
        double[] c = new double[batch * m * n];
        for (int z = 0; z < batch; z++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++) {
                        double av = ta ? a[z * m * k + p * m + i] : a[z * m * k + i * k + p];
                        int bo = sharedB ? 0 : z * k * n;
                        double bv = tb ? b[bo + j * k + p] : b[bo + p * n + j];
                        s += av * bv;
                    }
                    c[(z * m + i) * n + j] = alpha * s;
                }
        return c;
    }
}
