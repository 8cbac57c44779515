package io.attn.cuda;

import io.attn.kernels.Kernel;

/**
 * {@link Blas} on our own tiled SGEMM ({@code gemm.cu}): the fallback when no cuBLAS library loads. Row-major
 * natively (no swap trick); float32 FMA only, so {@code Precision.TF32} has no effect here.
 */
final class KernelGemm implements Blas {
    private static final int TILE = 64, MAX_GRID_Y = 65535, MAX_GRID_Z = 65535;
    private final Launcher launcher;

    KernelGemm(Launcher launcher) {
        this.launcher = launcher;
    }

    @Override
    public String description() {
        return "built-in tiled SGEMM kernel (no cuBLAS)";
    }

    @Override
    public void sgemm(
            boolean transA,
            boolean transB,
            int m,
            int n,
            int k,
            float alpha,
            DevPtr a,
            int lda,
            long strideA,
            DevPtr b,
            int ldb,
            long strideB,
            float beta,
            DevPtr c,
            int ldc,
            long strideC,
            int batch) {
        if (m == 0 || n == 0 || batch == 0) return;
        // grid.y is limited to 65535 tiles of 64 rows: larger m runs in row chunks (A and C offset by the chunk)
        int maxRows = MAX_GRID_Y * TILE;
        for (int r0 = 0; r0 < m; r0 += maxRows) {
            int rows = Math.min(maxRows, m - r0);
            long aOff = 4L * (transA ? r0 : (long) r0 * lda), cOff = 4L * r0 * ldc;
            var args = new KernelArgs()
                    .ptr(a.address() + aOff)
                    .ptr(b.address())
                    .ptr(c.address() + cOff)
                    .i32(rows)
                    .i32(n)
                    .i32(k)
                    .i32(transA ? 1 : 0)
                    .i32(transB ? 1 : 0)
                    .i32(lda)
                    .i32(ldb)
                    .i32(ldc)
                    .i64(strideA)
                    .i64(strideB)
                    .i64(strideC)
                    .i32(batch)
                    .f32(alpha)
                    .f32(beta);
            launcher.launch(
                    Kernel.GEMM_F32,
                    (n + TILE - 1) / TILE,
                    (rows + TILE - 1) / TILE,
                    Math.min(batch, MAX_GRID_Z),
                    256,
                    args);
        }
    }

    @Override
    public void close() {}
}
