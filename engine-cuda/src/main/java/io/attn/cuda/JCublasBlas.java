package io.attn.cuda;

import io.attn.AttnException;
import io.attn.engine.Precision;
import jcuda.Pointer;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.runtime.cudaStream_t;

/**
 * cuBLAS through JCublas2 (JNI). Its native wrapper links {@code libcublas.so.12} with versioned symbols, so it only
 * loads where CUDA 12's cuBLAS is on the linker path; creating this class elsewhere throws a {@link LinkageError}
 * that the caller catches. Row-major via the swap trick ({@link Blas}); FP32 uses {@code CUBLAS_DEFAULT_MATH}, TF32
 * sets {@code CUBLAS_TF32_TENSOR_OP_MATH}; BF16 / FP16 also get TF32 math here (this path only sets a math mode: no
 * 16-bit compute types), as its description says.
 */
final class JCublasBlas implements Blas {
    private final cublasHandle handle = new cublasHandle();
    private final String description;
    private boolean closed;

    JCublasBlas(RawStream stream, Precision precision) {
        FfmCublas.status(JCublas2.cublasCreate(handle), "cublasCreate (JCublas2)");
        try {
            FfmCublas.status(JCublas2.cublasSetStream(handle, new cudaStream_t(stream)), "cublasSetStream (JCublas2)");
            boolean tf32 = precision != Precision.FP32;
            int mode = tf32 ? FfmCublas.CUBLAS_TF32_TENSOR_OP_MATH : FfmCublas.CUBLAS_DEFAULT_MATH;
            FfmCublas.status(JCublas2.cublasSetMathMode(handle, mode), "cublasSetMathMode (JCublas2)");
            int[] v = {0};
            FfmCublas.status(JCublas2.cublasGetVersion(handle, v), "cublasGetVersion (JCublas2)");
            description = "cuBLAS " + v[0] / 10000 + "." + (v[0] / 100) % 100 + "." + v[0] % 100 + " via JCublas2, "
                    + (!tf32
                            ? "FP32, CUBLAS_DEFAULT_MATH (no TF32)"
                            : precision == Precision.TF32
                                    ? "TF32 tensor-op math"
                                    : "TF32 tensor-op math (" + precision
                                            + " GEMMs need the java.lang.foreign cuBLAS)");
        } catch (RuntimeException e) {
            JCublas2.cublasDestroy(handle);
            throw e;
        }
    }

    @Override
    public String description() {
        return description;
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
        if (closed) throw new IllegalStateException("cuBLAS handle is closed");
        if (m == 0 || n == 0 || batch == 0) return;
        // swap trick: column-major C^T = op(B)^T op(A)^T (see Blas)
        int st = JCublas2.cublasSgemmStridedBatched(
                handle,
                transB ? FfmCublas.OP_T : FfmCublas.OP_N,
                transA ? FfmCublas.OP_T : FfmCublas.OP_N,
                n,
                m,
                k,
                Pointer.to(new float[] {alpha}),
                b,
                ldb,
                strideB,
                a,
                lda,
                strideA,
                Pointer.to(new float[] {beta}),
                c,
                ldc,
                strideC,
                batch);
        FfmCublas.status(st, "cublasSgemmStridedBatched (JCublas2, m=" + m + ", n=" + n + ", k=" + k + ")");
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        int st = JCublas2.cublasDestroy(handle);
        if (st != 0) throw new AttnException(AttnException.Code.INTERNAL, "cublasDestroy (JCublas2) failed: " + st);
    }
}
