package io.attn.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.attn.AttnException;
import io.attn.engine.Precision;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * cuBLAS bound with {@code java.lang.foreign} from the library {@link CublasLocator} found ({@code libcublas.so.13}
 * or {@code .so.12}), so that no JNI wrapper ties us to one cuBLAS major version. Binds {@code cublasCreate_v2},
 * {@code cublasSetStream_v2}, {@code cublasSetMathMode}, {@code cublasSgemmStridedBatched}, {@code
 * cublasGemmStridedBatchedEx} (TF32, BF16, FP16), {@code cublasGetProperty}, {@code cublasDestroy_v2}.
 *
 * <p>FP32 (the default) uses {@code CUBLAS_DEFAULT_MATH} with plain SGEMM: no TF32. The other precisions use {@code
 * cublasGemmStridedBatchedEx} on the same fp32 buffers ({@code CUDA_R_32F} A, B, C) with a fast compute type that
 * lets cuBLAS round the inputs for the tensor cores and accumulate in fp32 ({@link #computeType}): {@link
 * Precision#TF32} {@code CUBLAS_COMPUTE_32F_FAST_TF32}, {@link Precision#BF16} {@code CUBLAS_COMPUTE_32F_FAST_16BF},
 * {@link Precision#FP16} {@code CUBLAS_COMPUTE_32F_FAST_16F}; no conversion kernels or extra buffers. That is the path of
 * GEMMs whose B is not a 16-bit weight; at bf16 / fp16 the backend keeps its GEMM weights in 16 bits and multiplies
 * them with {@link #gemm16} ({@code CUDA_R_16BF / CUDA_R_16F} A and B, {@code CUDA_R_32F} C, {@code
 * CUBLAS_COMPUTE_32F}). Scalars are passed in host memory
 * (the default pointer mode): cuBLAS reads them before the call returns. Row-major via the swap trick ({@link Blas}).
 * Not thread-safe by itself: the backend lock serialises calls.
 */
@SuppressWarnings("restricted")
final class FfmCublas implements Blas {
    // cublasOperation_t, cublasMath_t, cudaDataType_t, cublasComputeType_t, cublasGemmAlgo_t, libraryPropertyType
    static final int OP_N = 0, OP_T = 1;
    static final int CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3;
    static final int CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14, CUBLAS_GEMM_DEFAULT = -1;
    static final int CUBLAS_COMPUTE_32F = 68;
    static final int CUBLAS_COMPUTE_32F_FAST_16F = 74,
            CUBLAS_COMPUTE_32F_FAST_16BF = 75,
            CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
    static final int MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2;
    private final MethodHandle destroy, sgemm, gemmEx;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment alpha, beta;
    private final MemorySegment handle;
    private final int computeType; // 0: plain SGEMM
    private final boolean useEx;
    private final String description;
    private boolean closed;

    private FfmCublas(CublasLocator.Found lib, RawStream stream, Precision precision) {
        SymbolLookup sym = lib.symbols();
        Linker linker = Linker.nativeLinker();
        MethodHandle create =
                bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cublasCreate_v2", "cublasCreate");
        MethodHandle setStream = bind(
                linker,
                sym,
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS),
                "cublasSetStream_v2",
                "cublasSetStream");
        MethodHandle setMath =
                bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), "cublasSetMathMode");
        MethodHandle getProp =
                bind(linker, sym, FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), "cublasGetProperty");
        destroy = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cublasDestroy_v2", "cublasDestroy");
        sgemm = bind(
                linker,
                sym,
                FunctionDescriptor.of(
                        JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
                        JAVA_LONG, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_INT),
                "cublasSgemmStridedBatched");
        MethodHandle ex;
        try {
            ex = bind(
                    linker,
                    sym,
                    FunctionDescriptor.of(
                            JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                            JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS,
                            JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT),
                    "cublasGemmStridedBatchedEx");
        } catch (AttnException e) {
            ex = null;
        }
        gemmEx = ex;
        alpha = arena.allocate(JAVA_FLOAT);
        beta = arena.allocate(JAVA_FLOAT);
        MemorySegment h = arena.allocate(ADDRESS);
        int[] version = new int[3];
        try {
            status((int) create.invokeExact(h), "cublasCreate_v2");
            handle = h.get(ADDRESS, 0);
            status(
                    (int) setStream.invokeExact(handle, MemorySegment.ofAddress(stream.address())),
                    "cublasSetStream_v2");
            computeType = computeType(precision);
            useEx = computeType != 0 && gemmEx != null;
            // no GemmEx (a very old cuBLAS): the math mode gives TF32 for any non-FP32 precision
            int mode = computeType != 0 && gemmEx == null ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
            status((int) setMath.invokeExact(handle, mode), "cublasSetMathMode(" + mode + ")");
            MemorySegment v = arena.allocate(JAVA_INT);
            for (int i = 0; i < 3; i++) {
                status((int) getProp.invokeExact(i, v), "cublasGetProperty(" + i + ")");
                version[i] = v.get(JAVA_INT, 0);
            }
        } catch (AttnException e) {
            arena.close();
            throw e;
        } catch (Throwable t) {
            arena.close();
            throw new AttnException(AttnException.Code.INTERNAL, "cuBLAS initialisation failed: " + t, t);
        }
        description = "cuBLAS " + version[0] + "." + version[1] + "." + version[2] + " via java.lang.foreign ("
                + lib.where() + "), " + mathName(computeType, gemmEx != null);
    }

    /** The cuBLAS compute type for {@code p} with fp32 buffers, or 0 for FP32 (plain SGEMM, no tensor cores). */
    static int computeType(Precision p) {
        return switch (p) {
            case FP32 -> 0;
            case TF32 -> CUBLAS_COMPUTE_32F_FAST_TF32;
            case BF16 -> CUBLAS_COMPUTE_32F_FAST_16BF;
            case FP16 -> CUBLAS_COMPUTE_32F_FAST_16F;
        };
    }

    private static String mathName(int computeType, boolean haveEx) {
        if (computeType == 0) return "FP32, CUBLAS_DEFAULT_MATH (no TF32)";
        if (!haveEx) return "TF32 tensor-op math (no cublasGemmStridedBatchedEx)";
        return switch (computeType) {
            case CUBLAS_COMPUTE_32F_FAST_TF32 -> "TF32 tensor-op math";
            case CUBLAS_COMPUTE_32F_FAST_16BF -> "BF16 tensor-op math (fp32 accumulation)";
            default -> "FP16 tensor-op math (fp32 accumulation)";
        };
    }

    /** Binds cuBLAS from the library {@code lib}; throws AttnException when a required symbol or cublasCreate fails. */
    static FfmCublas open(CublasLocator.Found lib, RawStream stream, Precision precision) {
        return new FfmCublas(lib, stream, precision);
    }

    private static MethodHandle bind(Linker linker, SymbolLookup sym, FunctionDescriptor fd, String... names) {
        for (String n : names) {
            Optional<MemorySegment> s = sym.find(n);
            if (s.isPresent()) return linker.downcallHandle(s.get(), fd);
        }
        throw new AttnException(
                AttnException.Code.DEVICE_UNAVAILABLE, "cuBLAS library lacks " + String.join(" / ", names));
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public boolean halfInputs() {
        return gemmEx != null;
    }

    @Override
    public void sgemm(
            boolean transA,
            boolean transB,
            int m,
            int n,
            int k,
            float alphaV,
            DevPtr a,
            int lda,
            long strideA,
            DevPtr b,
            int ldb,
            long strideB,
            float betaV,
            DevPtr c,
            int ldc,
            long strideC,
            int batch) {
        if (closed) throw new IllegalStateException("cuBLAS handle is closed");
        if (m == 0 || n == 0 || batch == 0) return;
        alpha.set(JAVA_FLOAT, 0, alphaV);
        beta.set(JAVA_FLOAT, 0, betaV);
        // row-major C = op(A) op(B)  ==  column-major C^T = op(B)^T op(A)^T: swap operands and m/n (see Blas)
        int opB = transB ? OP_T : OP_N, opA = transA ? OP_T : OP_N;
        MemorySegment pa = MemorySegment.ofAddress(a.address()),
                pb = MemorySegment.ofAddress(b.address()),
                pc = MemorySegment.ofAddress(c.address());
        String call = (useEx ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched") + "(m=" + m + ", n=" + n
                + ", k=" + k + ", batch=" + batch + ")";
        int st;
        try {
            if (useEx)
                st = gemmEx(
                        opB,
                        opA,
                        n,
                        m,
                        k,
                        pb,
                        pa,
                        CUDA_R_32F,
                        ldb,
                        strideB,
                        lda,
                        strideA,
                        pc,
                        ldc,
                        strideC,
                        batch,
                        computeType);
            else
                st = (int) sgemm.invokeExact(
                        handle, opB, opA, n, m, k, alpha, pb, ldb, strideB, pa, lda, strideA, beta, pc, ldc, strideC,
                        batch);
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, call + " failed: " + t, t);
        }
        status(st, call);
    }

    /**
     * {@code cublasGemmStridedBatchedEx} with 16-bit A and B ({@code CUDA_R_16F} / {@code CUDA_R_16BF}), fp32 C and
     * {@code CUBLAS_COMPUTE_32F}: the backend's GEMMs on 16-bit weights at precision bf16 / fp16. Row-major via the
     * swap trick, as {@link #sgemm}.
     */
    @Override
    public void gemm16(
            boolean f16,
            boolean transA,
            boolean transB,
            int m,
            int n,
            int k,
            float alphaV,
            DevPtr a,
            int lda,
            long strideA,
            DevPtr b,
            int ldb,
            long strideB,
            float betaV,
            DevPtr c,
            int ldc,
            long strideC,
            int batch) {
        if (closed) throw new IllegalStateException("cuBLAS handle is closed");
        if (gemmEx == null) throw new UnsupportedOperationException(description + ": no 16-bit GEMM");
        if (m == 0 || n == 0 || batch == 0) return;
        alpha.set(JAVA_FLOAT, 0, alphaV);
        beta.set(JAVA_FLOAT, 0, betaV);
        int opB = transB ? OP_T : OP_N, opA = transA ? OP_T : OP_N, type = f16 ? CUDA_R_16F : CUDA_R_16BF;
        String call = "cublasGemmStridedBatchedEx(" + (f16 ? "CUDA_R_16F" : "CUDA_R_16BF") + ", m=" + m + ", n=" + n
                + ", k=" + k + ", batch=" + batch + ")";
        int st;
        try {
            st = gemmEx(
                    opB,
                    opA,
                    n,
                    m,
                    k,
                    MemorySegment.ofAddress(b.address()),
                    MemorySegment.ofAddress(a.address()),
                    type,
                    ldb,
                    strideB,
                    lda,
                    strideA,
                    MemorySegment.ofAddress(c.address()),
                    ldc,
                    strideC,
                    batch,
                    CUBLAS_COMPUTE_32F);
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, call + " failed: " + t, t);
        }
        status(st, call);
    }

    /**
     * {@code cublasGemmStridedBatchedEx} in cuBLAS's column-major terms (the callers pass the swapped operands): A and
     * B of {@code inType}, fp32 C, the scalars already in {@code alpha} / {@code beta}; returns the status.
     */
    private int gemmEx(
            int opA,
            int opB,
            int m,
            int n,
            int k,
            MemorySegment a,
            MemorySegment b,
            int inType,
            int lda,
            long strideA,
            int ldb,
            long strideB,
            MemorySegment c,
            int ldc,
            long strideC,
            int batch,
            int compute)
            throws Throwable {
        return (int) gemmEx.invokeExact(
                handle,
                opA,
                opB,
                m,
                n,
                k,
                alpha,
                a,
                inType,
                lda,
                strideA,
                b,
                inType,
                ldb,
                strideB,
                beta,
                c,
                CUDA_R_32F,
                ldc,
                strideC,
                batch,
                compute,
                CUBLAS_GEMM_DEFAULT);
    }

    /** Throws for a non-zero cublasStatus_t; CUBLAS_STATUS_ALLOC_FAILED is DEVICE_OUT_OF_MEMORY. */
    static void status(int st, String call) {
        if (st == 0) return;
        AttnException.Code code = st == 3 ? AttnException.Code.DEVICE_OUT_OF_MEMORY : AttnException.Code.INTERNAL;
        throw new AttnException(
                code, "cuBLAS " + call + " failed: " + statusName(st) + (st == 3 ? "; " + Cuda.memInfo() : ""));
    }

    static String statusName(int st) {
        return switch (st) {
            case 1 -> "CUBLAS_STATUS_NOT_INITIALIZED";
            case 3 -> "CUBLAS_STATUS_ALLOC_FAILED";
            case 7 -> "CUBLAS_STATUS_INVALID_VALUE";
            case 8 -> "CUBLAS_STATUS_ARCH_MISMATCH";
            case 11 -> "CUBLAS_STATUS_MAPPING_ERROR";
            case 13 -> "CUBLAS_STATUS_EXECUTION_FAILED";
            case 14 -> "CUBLAS_STATUS_INTERNAL_ERROR";
            case 15 -> "CUBLAS_STATUS_NOT_SUPPORTED";
            case 16 -> "CUBLAS_STATUS_LICENSE_ERROR";
            default -> "cublasStatus " + st;
        };
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            int st = (int) destroy.invokeExact(handle);
            status(st, "cublasDestroy_v2");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cublasDestroy_v2 failed: " + t, t);
        } finally {
            arena.close();
        }
    }
}
