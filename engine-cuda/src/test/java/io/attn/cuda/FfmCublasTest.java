package io.attn.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Precision;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code java.lang.foreign} binding of cuBLAS, against a fake {@code libcublas.so.13} compiled here with the C
 * compiler (skipped without one): the library is found through {@code cublas.path}, every call's C signature matches
 * (a mismatch in the method types would throw at the call), and sgemm applies the row-major swap trick: operands,
 * m/n, leading dimensions and strides swapped, transpose flags kept with their operand. Expected values are worked by
 * hand from the {@link Blas} javadoc.
 *
 * <p>Tagged {@code fake-natives}: it loads fake (and, on a GPU host, real) cuBLAS libraries into its JVM, and a process
 * holds one {@code libcublasLt.so.13} per soname, so a later real cuBLAS would bind to a fake Lt and the dynamic linker
 * would end the process (the first GPU run: "undefined symbol: cublasLtCtxInit"). Surefire gives each test class of
 * this module its own JVM, and tools/gpu-run.sh runs these classes in JVMs of their own.
 */
@Tag("fake-natives")
@SuppressWarnings("restricted")
class FfmCublasTest {
    static final String FAKE = """
            static long long last[32];
            int cublasCreate_v2(void **h) { *h = (void *)0x1234; last[0] = 100; return 0; }
            int cublasDestroy_v2(void *h) { last[0] = 101; last[1] = (long long)h; return 0; }
            int cublasSetStream_v2(void *h, void *s) { last[2] = (long long)s; return 0; }
            int cublasSetMathMode(void *h, int m) { last[3] = m; return 0; }
            int cublasGetProperty(int t, int *v) { *v = t == 0 ? 13 : t == 1 ? 0 : 7; return 0; }
            static int rec(int ta, int tb, int m, int n, int k, float alpha, const void *A, int lda, long long sA,
                           const void *B, int ldb, long long sB, float beta, void *C, int ldc, long long sC,
                           int batch, int compute) {
                long long *o = last + 4;
                o[0] = ta; o[1] = tb; o[2] = m; o[3] = n; o[4] = k; o[5] = (long long)(alpha * 1000);
                o[6] = (long long)A; o[7] = lda; o[8] = sA; o[9] = (long long)B; o[10] = ldb; o[11] = sB;
                o[12] = (long long)(beta * 1000); o[13] = (long long)C; o[14] = ldc; o[15] = sC; o[16] = batch;
                o[17] = compute;
                return batch == 999 ? 13 : 0;
            }
            static int compute_on_host; /* set by fake_compute: treat pointers as host memory and multiply */
            void fake_compute(int on) { compute_on_host = on; }
            int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                          const float *A, int lda, long long sA, const float *B, int ldb,
                                          long long sB, const float *beta, float *C, int ldc, long long sC,
                                          int batch) {
                if (compute_on_host) /* column-major reference GEMM, as documented for cuBLAS */
                    for (int z = 0; z < batch; z++)
                        for (int j = 0; j < n; j++)
                            for (int i = 0; i < m; i++) {
                                double acc = 0;
                                for (int p = 0; p < k; p++) {
                                    double a = ta ? A[z * sA + p + (long long)i * lda] : A[z * sA + i + (long long)p * lda];
                                    double b = tb ? B[z * sB + j + (long long)p * ldb] : B[z * sB + p + (long long)j * ldb];
                                    acc += a * b;
                                }
                                float *c = C + z * sC + i + (long long)j * ldc;
                                *c = (float)(*alpha * acc + (*beta == 0 ? 0 : *beta * *c));
                            }
                return rec(ta, tb, m, n, k, *alpha, A, lda, sA, B, ldb, sB, *beta, C, ldc, sC, batch, -1);
            }
            int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                                           const void *A, int at, int lda, long long sA, const void *B, int bt,
                                           int ldb, long long sB, const void *beta, void *C, int ct, int ldc,
                                           long long sC, int batch, int compute, int algo) {
                /* A and B: both CUDA_R_32F, or both 16-bit (CUDA_R_16F 2, CUDA_R_16BF 14) with CUBLAS_COMPUTE_32F (68) */
                if (at != bt || ct != 0 || algo != -1) return 7;
                if (at != 0 && !((at == 2 || at == 14) && compute == 68)) return 7;
                last[22] = at;
                return rec(ta, tb, m, n, k, *(const float *)alpha, A, lda, sA, B, ldb, sB, *(const float *)beta,
                           C, ldc, sC, batch, compute);
            }
            void fake_last(long long *out) { for (int i = 0; i < 32; i++) out[i] = last[i]; }
            """;

    @TempDir
    Path dir;

    CublasLocator.Found lib;

    @BeforeEach
    void buildFake() throws Exception {
        Path src = dir.resolve("fake.c");
        Files.writeString(src, FAKE);
        Process p;
        try {
            p = new ProcessBuilder(
                            "cc",
                            "-shared",
                            "-fPIC",
                            "-O1",
                            "-Wl,-soname,libcublas.so.13",
                            "-o",
                            dir.resolve("libcublas.so.13").toString(),
                            src.toString())
                    .redirectErrorStream(true)
                    .start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no C compiler (cc) to build the fake cuBLAS: " + e.getMessage());
            return;
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        lib = CublasLocator.locate(Map.of("cublas.path", dir.toString())).found();
        assertNotNull(lib);
        assertEquals(dir.resolve("libcublas.so.13").toString(), lib.where());
    }

    long[] last() throws Throwable {
        MethodHandle h = Linker.nativeLinker()
                .downcallHandle(lib.symbols().find("fake_last").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(JAVA_LONG, 32);
            h.invokeExact(s);
            return s.toArray(JAVA_LONG);
        }
    }

    @Test
    void sgemmSwapsOperandsForRowMajor() throws Throwable {
        FfmCublas blas = FfmCublas.open(lib, new RawStream(), Precision.FP32);
        assertEquals(
                "cuBLAS 13.0.7 via java.lang.foreign (" + lib.where() + "), FP32, CUBLAS_DEFAULT_MATH (no TF32)",
                blas.description());
        assertEquals(FfmCublas.CUBLAS_DEFAULT_MATH, last()[3]);
        // row-major C (2 x 3 x 5) = 0.5 * A^T . B, A stored (7 x 3) per batch, B (7 x 5) per batch
        blas.sgemm(
                true,
                false,
                3,
                5,
                7,
                0.5f,
                DevPtr.fake(0xA000),
                3,
                21,
                DevPtr.fake(0xB000),
                5,
                35,
                0f,
                DevPtr.fake(0xC000),
                5,
                15,
                2);
        long[] o = java.util.Arrays.copyOfRange(last(), 4, 22);
        // column-major C^T (5 x 3) = B^T-view (OP_N) . A-view (OP_T): first operand B, m = 5, n = 3
        long[] want = {0, 1, 5, 3, 7, 500, 0xB000, 5, 35, 0xA000, 3, 21, 0, 0xC000, 5, 15, 2, -1};
        assertEquals(java.util.Arrays.toString(want), java.util.Arrays.toString(o));
        AttnException e = assertThrows(
                AttnException.class,
                () -> blas.sgemm(
                        false,
                        false,
                        1,
                        1,
                        1,
                        1f,
                        DevPtr.fake(1),
                        1,
                        1,
                        DevPtr.fake(2),
                        1,
                        1,
                        0f,
                        DevPtr.fake(3),
                        1,
                        1,
                        999));
        assertTrue(e.getMessage().contains("CUBLAS_STATUS_EXECUTION_FAILED"), e.getMessage());
        blas.close();
        blas.close(); // idempotent
        assertEquals(101, last()[0]);
        assertEquals(0x1234, last()[1]);
    }

    @Test
    void rowMajorResultsThroughAColumnMajorLibrary() throws Throwable {
        // the fake multiplies column-major on host memory like cuBLAS would on the device; FfmCublas must turn that
        // into the row-major product for every layout (checked against the judge's product in double precision; the
        // fake
        // accumulates in double and rounds once, so 1e-5 absolute covers it for inputs in [-1, 1] and k = 7)
        MethodHandle on = Linker.nativeLinker()
                .downcallHandle(
                        lib.symbols().find("fake_compute").orElseThrow(),
                        FunctionDescriptor.ofVoid(java.lang.foreign.ValueLayout.JAVA_INT));
        on.invokeExact(1);
        java.util.Random rnd = new java.util.Random(7);
        int batch = 2, m = 3, n = 5, k = 7;
        try (FfmCublas blas = FfmCublas.open(lib, new RawStream(), Precision.FP32);
                Arena arena = Arena.ofConfined()) {
            for (boolean ta : new boolean[] {false, true})
                for (boolean tb : new boolean[] {false, true})
                    for (boolean shared : new boolean[] {false, true}) {
                        float[] a = new float[batch * m * k], b = new float[(shared ? 1 : batch) * k * n];
                        for (int i = 0; i < a.length; i++) a[i] = rnd.nextFloat() * 2 - 1;
                        for (int i = 0; i < b.length; i++) b[i] = rnd.nextFloat() * 2 - 1;
                        MemorySegment sa = arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_FLOAT, a);
                        MemorySegment sb = arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_FLOAT, b);
                        MemorySegment sc = arena.allocate(java.lang.foreign.ValueLayout.JAVA_FLOAT, batch * m * n);
                        blas.sgemm(
                                ta,
                                tb,
                                m,
                                n,
                                k,
                                0.5f,
                                DevPtr.fake(sa.address()),
                                ta ? m : k,
                                (long) m * k,
                                DevPtr.fake(sb.address()),
                                tb ? k : n,
                                shared ? 0 : (long) k * n,
                                0f,
                                DevPtr.fake(sc.address()),
                                n,
                                (long) m * n,
                                batch);
                        double[] want = CudaOpsChecks.reference(a, b, batch, m, n, k, ta, tb, 0.5f, shared);
                        float[] got = sc.toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT);
                        for (int i = 0; i < want.length; i++)
                            assertEquals(
                                    want[i],
                                    got[i],
                                    1e-5,
                                    "ta=" + ta + " tb=" + tb + " shared=" + shared + " [" + i + "]");
                    }
        } finally {
            on.invokeExact(0);
        }
    }

    @Test
    void tf32UsesGemmExWithFastTf32Compute() throws Throwable {
        gemmExWith(Precision.TF32, "TF32 tensor-op math", 77);
    }

    @Test
    void bf16AndFp16UseGemmExWithFast16BitComputeOnFp32Buffers() throws Throwable {
        // CUBLAS_COMPUTE_32F_FAST_16BF = 75, CUBLAS_COMPUTE_32F_FAST_16F = 74 (cublas_api.h); A, B, C stay CUDA_R_32F
        gemmExWith(Precision.BF16, "BF16 tensor-op math (fp32 accumulation)", 75);
        gemmExWith(Precision.FP16, "FP16 tensor-op math (fp32 accumulation)", 74);
    }

    private void gemmExWith(Precision precision, String math, long computeType) throws Throwable {
        try (FfmCublas blas = FfmCublas.open(lib, new RawStream(), precision)) {
            assertTrue(blas.description().endsWith(math), blas.description());
            blas.sgemm(
                    false,
                    true,
                    4,
                    6,
                    8,
                    1f,
                    DevPtr.fake(0xA0),
                    8,
                    32,
                    DevPtr.fake(0xB0),
                    8,
                    48,
                    0f,
                    DevPtr.fake(0xC0),
                    6,
                    24,
                    3);
            long[] o = java.util.Arrays.copyOfRange(last(), 4, 22);
            long[] want = {1, 0, 6, 4, 8, 1000, 0xB0, 8, 48, 0xA0, 8, 32, 0, 0xC0, 6, 24, 3, computeType};
            assertEquals(java.util.Arrays.toString(want), java.util.Arrays.toString(o));
        }
    }

    @Test
    void gemm16PassesSixteenBitOperandsWithFp32ComputeAndSwapsForRowMajor() throws Throwable {
        // cudaDataType CUDA_R_16BF = 14, CUDA_R_16F = 2, CUBLAS_COMPUTE_32F = 68 (library_types.h, cublas_api.h)
        for (boolean f16 : new boolean[] {false, true})
            try (FfmCublas blas = FfmCublas.open(lib, new RawStream(), f16 ? Precision.FP16 : Precision.BF16)) {
                assertTrue(blas.halfInputs());
                blas.gemm16(
                        f16,
                        false,
                        true,
                        4,
                        6,
                        8,
                        0.5f,
                        DevPtr.fake(0xA0),
                        8,
                        32,
                        DevPtr.fake(0xB0),
                        8,
                        0,
                        0f,
                        DevPtr.fake(0xC0),
                        6,
                        24,
                        3);
                long[] all = last();
                long[] o = java.util.Arrays.copyOfRange(all, 4, 22);
                long[] want = {1, 0, 6, 4, 8, 500, 0xB0, 8, 0, 0xA0, 8, 32, 0, 0xC0, 6, 24, 3, 68};
                assertEquals(java.util.Arrays.toString(want), java.util.Arrays.toString(o), f16 ? "fp16" : "bf16");
                assertEquals(f16 ? 2 : 14, all[22], "A and B data type");
            }
    }

    @Test
    void probeNamesTheLibraryFoundThroughTheOption() {
        assertEquals(
                "cuBLAS via java.lang.foreign (" + lib.where() + ")",
                GemmPaths.wouldUse(Map.of("cublas.path", dir.toString())));
    }
}
