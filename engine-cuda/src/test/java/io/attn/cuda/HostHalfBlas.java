package io.attn.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.attn.io.Bf16;
import io.attn.io.Half;
import java.lang.foreign.MemorySegment;

/**
 * A {@link Blas} for the emulated backend that, like cuBLAS, multiplies 16-bit inputs ({@link #gemm16}): the stand-in
 * for {@code cublasGemmStridedBatchedEx} with {@code CUDA_R_16BF / CUDA_R_16F} A and B, fp32 C and {@code
 * CUBLAS_COMPUTE_32F}, on host memory (the emulator's "device pointers" are host addresses). Each 16-bit value is
 * widened exactly and the products (exact in fp32: at most 22 significant bits) are summed in fp32 in k order, then
 * {@code alpha * sum + beta * C}. fp32 GEMMs go to gemm.cu on the emulator ({@link KernelGemm}), as before.
 */
@SuppressWarnings("restricted")
final class HostHalfBlas implements Blas {
    private final KernelGemm fp32;
    /** 16-bit GEMMs run so far (tests check that the path they judge ran). */
    int gemm16Calls;

    HostHalfBlas(Launcher launcher) {
        this.fp32 = new KernelGemm(launcher);
    }

    @Override
    public String description() {
        return "host stand-in for cuBLAS (16-bit inputs on the host, fp32 on gemm.cu)";
    }

    @Override
    public boolean halfInputs() {
        return true;
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
        fp32.sgemm(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batch);
    }

    @Override
    public void gemm16(
            boolean f16,
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
        gemm16Calls++;
        MemorySegment sa = MemorySegment.ofAddress(a.address()).reinterpret(Long.MAX_VALUE),
                sb = MemorySegment.ofAddress(b.address()).reinterpret(Long.MAX_VALUE),
                sc = MemorySegment.ofAddress(c.address()).reinterpret(Long.MAX_VALUE);
        float[] row = new float[k];
        for (int z = 0; z < batch; z++)
            for (int i = 0; i < m; i++) {
                for (int p = 0; p < k; p++) {
                    long ia = z * strideA + (transA ? (long) p * lda + i : (long) i * lda + p);
                    row[p] = widen(sa.getAtIndex(JAVA_SHORT, ia), f16);
                }
                for (int j = 0; j < n; j++) {
                    float acc = 0;
                    for (int p = 0; p < k; p++) {
                        long ib = z * strideB + (transB ? (long) j * ldb + p : (long) p * ldb + j);
                        acc += row[p] * widen(sb.getAtIndex(JAVA_SHORT, ib), f16);
                    }
                    long ic = z * strideC + (long) i * ldc + j;
                    float old = beta == 0 ? 0 : sc.getAtIndex(JAVA_FLOAT, ic);
                    sc.setAtIndex(JAVA_FLOAT, ic, alpha * acc + beta * old);
                }
            }
    }

    private static float widen(short v, boolean f16) {
        return f16 ? Half.toFloat(v) : Bf16.toFloat(v);
    }

    @Override
    public void close() {}
}
