package io.attn.cuda;

/**
 * Strided batched SGEMM with <b>row-major</b> semantics: for each batch {@code z < batch},
 *
 * <pre>
 *   C_z (m x n) = alpha * op(A_z) (m x k) . op(B_z) (k x n) + beta * C_z
 *   A_z = a + z * strideA (elements), B_z = b + z * strideB (0 shares one B), C_z = c + z * strideC
 *   op(A) = A, stored (m x k) with row stride lda, or A^T when transA, A stored (k x m) with row stride lda
 *   op(B) likewise with ldb; C has row stride ldc.
 * </pre>
 *
 * <p><b>The swap trick</b> used by the cuBLAS implementations: cuBLAS is column-major, and a row-major matrix with
 * row stride ld is, read column-major with the same ld, its transpose. So the row-major product {@code C = op(A)
 * op(B)} is computed as the column-major {@code C^T = op(B)^T op(A)^T}: call {@code gemm(opB, opA, n, m, k, alpha,
 * B, ldb, A, lda, beta, C, ldc)} with the operands and the m/n sizes swapped, the transpose flags unchanged. No data
 * is moved.
 *
 * <p>Implementations: {@link FfmCublas} (libcublas.so.13 / .so.12 through {@code java.lang.foreign}), {@link
 * JCublasBlas} (JCublas2, needs libcublas.so.12), {@link KernelGemm} (our gemm.cu). Calls are made with the backend
 * lock held and the context current; work is queued on the backend's stream.
 */
interface Blas extends AutoCloseable {
    /** One line: library, version, where it was loaded from, math mode. */
    String description();

    void sgemm(
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
            int batch);

    /**
     * Whether {@link #gemm16} runs here: cuBLAS with {@code cublasGemmStridedBatchedEx} ({@link FfmCublas}); not our
     * gemm.cu nor JCublas2. The backend keeps GEMM weights in 16 bits only where it does.
     */
    default boolean halfInputs() {
        return false;
    }

    /**
     * The product of {@link #sgemm} (same conventions) with 16-bit A and B ({@code f16}: IEEE half, else bfloat16;
     * strides and leading dimensions in elements), fp32 C and fp32 accumulation: {@code cublasGemmStridedBatchedEx}
     * with {@code CUDA_R_16F} / {@code CUDA_R_16BF} inputs, {@code CUDA_R_32F} output, {@code CUBLAS_COMPUTE_32F}.
     * Only where {@link #halfInputs}.
     */
    default void gemm16(
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
        throw new UnsupportedOperationException(description() + ": no 16-bit GEMM");
    }

    /** Releases the library handle; idempotent. */
    @Override
    void close();
}
