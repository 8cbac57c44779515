package io.attn.cuda;

import io.attn.kernels.Kernel;
import io.attn.kernels.Kernels;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds a fake {@code libcuda.so.1} for tests: the driver-API functions the backend calls, on host memory ("device
 * pointers" are host addresses), with {@code cuLaunchKernel} running the {@link KernelEmulator}'s host build of the
 * kernel. Parameter sizes come from the PTX ({@link Kernels#params}), so a launch whose arguments do not match the
 * kernel fails as it would on a GPU. {@code cuModuleGetFunction} checks that the loaded PTX defines the entry. A
 * memory limit (env {@code ATTN_FAKE_MEM}, bytes) makes {@code cuMemAlloc} fail with CUDA_ERROR_OUT_OF_MEMORY.
 */
final class FakeDriver {
    private FakeDriver() {}

    static Path build(Path dir) throws IOException, InterruptedException {
        StringBuilder table = new StringBuilder("static const Entry ENTRIES[] = {\n");
        int count = 0;
        for (Kernel k : Kernel.values()) {
            List<String> sizes = new ArrayList<>();
            for (String t : Kernels.params(k)) sizes.add(t.equals("u64") ? "8" : "4");
            table.append("  {\"")
                    .append(k.entry())
                    .append("\", ")
                    .append(sizes.size())
                    .append(", {")
                    .append(String.join(", ", sizes))
                    .append("}},\n");
            count++;
        }
        table.append("};\nstatic const int NENTRIES = ").append(count).append(";\n");
        Path src = dir.resolve("fake_cuda.cpp");
        Files.writeString(src, SOURCE.replace("/*ENTRIES*/", table));
        Path lib = dir.resolve("libcuda.so.1");
        Process p = new ProcessBuilder(
                        "g++",
                        "-std=c++17",
                        "-O1",
                        "-shared",
                        "-fPIC",
                        "-w",
                        "-o",
                        lib.toString(),
                        src.toString(),
                        "-ldl")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0)
            throw new IOException("building the fake libcuda failed:\n" + out);
        return lib;
    }

    /**
     * A fake {@code libcublas.so.12} (with the {@code libcublas.so.12} symbol version JCublas2 binds to) whose GEMMs
     * compute column-major on host memory, as cuBLAS does on the device: both the FFM binding and JCublas2 load it.
     */
    static Path buildCublas(Path dir) throws IOException, InterruptedException {
        Path src = dir.resolve("fake_cublas.c"), map = dir.resolve("cublas.map");
        Files.writeString(src, CUBLAS);
        Files.writeString(map, "libcublas.so.12 { global: *; };\n");
        Path lib = dir.resolve("libcublas.so.12");
        Process p = new ProcessBuilder(
                        "gcc",
                        "-O1",
                        "-shared",
                        "-fPIC",
                        "-w",
                        "-Wl,-soname,libcublas.so.12",
                        "-Wl,--version-script=" + map,
                        "-o",
                        lib.toString(),
                        src.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0)
            throw new IOException("building the fake libcublas failed:\n" + out);
        return lib;
    }

    private static final String CUBLAS = """
            static void gemm(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, long long sA,
                             const float *B, int ldb, long long sB, float beta, float *C, int ldc, long long sC,
                             int batch) {
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
                            *c = (float)(alpha * acc + (beta == 0 ? 0 : beta * *c));
                        }
            }
            int cublasCreate_v2(void **h) { *h = (void *)0x1234; return 0; }
            int cublasDestroy_v2(void *h) { return 0; }
            int cublasSetStream_v2(void *h, void *s) { return 0; }
            int cublasSetMathMode(void *h, int m) { return 0; }
            int cublasGetProperty(int t, int *v) { *v = t == 0 ? 12 : t == 1 ? 99 : 0; return 0; }
            int cublasGetVersion_v2(void *h, int *v) { *v = 129900; return 0; }
            int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                          const float *A, int lda, long long sA, const float *B, int ldb,
                                          long long sB, const float *beta, float *C, int ldc, long long sC,
                                          int batch) {
                gemm(ta, tb, m, n, k, *alpha, A, lda, sA, B, ldb, sB, *beta, C, ldc, sC, batch);
                return 0;
            }
            int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                                           const void *A, int at, int lda, long long sA, const void *B, int bt,
                                           int ldb, long long sB, const void *beta, void *C, int ct, int ldc,
                                           long long sC, int batch, int compute, int algo) {
                if (at != 0 || bt != 0 || ct != 0) return 15;
                gemm(ta, tb, m, n, k, *(const float *)alpha, A, lda, sA, B, ldb, sB, *(const float *)beta, C, ldc,
                     sC, batch);
                return 0;
            }
            """;

    private static final String SOURCE = """
            #include <dlfcn.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <time.h>
            #include <string>
            extern "C" {
            typedef int CUresult;
            typedef int CUdevice;
            typedef unsigned long long CUdeviceptr;
            struct Entry { const char *name; int n; int size[32]; };
            /*ENTRIES*/
            static long long g_live, g_limit = -1;
            static void *g_emu;
            #define OK 0
            #define OOM 2
            #define NOT_FOUND 500
            #define INVALID 1
            CUresult cuInit(unsigned) {
                const char *lim = getenv("ATTN_FAKE_MEM");
                if (lim) g_limit = atoll(lim);
                g_emu = dlopen(getenv("ATTN_EMU_LIB"), RTLD_NOW);
                return g_emu ? OK : 100; /* CUDA_ERROR_NO_DEVICE */
            }
            CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
            CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
            CUresult cuDeviceGet(CUdevice *d, int i) { if (i != 0) return INVALID; *d = 0; return OK; }
            CUresult cuDeviceGetName(char *name, int len, CUdevice) { snprintf(name, len, "attn fake GPU (host emulation)"); return OK; }
            CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice) {
                *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 4 : 0; /* cc major, minor, SM count */
                return OK;
            }
            CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice) { *b = (size_t)1 << 30; return OK; }
            CUresult cuMemGetInfo_v2(size_t *f, size_t *t) {
                *t = g_limit >= 0 ? g_limit : (size_t)1 << 30;
                *f = *t - g_live;
                return OK;
            }
            CUresult cuDevicePrimaryCtxRetain(void **c, CUdevice) { *c = (void *)0xC0; return OK; }
            CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return OK; }
            CUresult cuCtxSetCurrent(void *c) { return c == (void *)0xC0 ? OK : 201; }
            CUresult cuStreamCreate(void **s, unsigned) { *s = (void *)0x5157; return OK; }
            CUresult cuStreamSynchronize(void *) { return OK; }
            CUresult cuStreamDestroy_v2(void *) { return OK; }
            CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
                if (g_limit >= 0 && g_live + (long long)n > g_limit) return OOM;
                void *m = malloc(n + 16);
                if (!m) return OOM;
                *(size_t *)m = n;
                g_live += n;
                *p = (CUdeviceptr)((char *)m + 16);
                return OK;
            }
            CUresult cuMemFree_v2(CUdeviceptr p) {
                char *m = (char *)p - 16;
                g_live -= *(size_t *)m;
                free(m);
                return OK;
            }
            static int g_pinned;
            CUresult cuMemHostAlloc(void **p, size_t n, unsigned) {
                if (getenv("ATTN_FAKE_NO_PINNED")) return OOM;
                *p = malloc(n); if (!*p) return OOM;
                g_pinned++;
                return OK;
            }
            CUresult cuMemFreeHost(void *p) { free(p); g_pinned--; return OK; }
            int attn_fake_pinned(void) { return g_pinned; }
            CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *) { memcpy((void *)d, s, n); return OK; }
            CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *) { memcpy(d, (void *)s, n); return OK; }
            CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *) {
                for (size_t i = 0; i < n; i++) ((unsigned *)d)[i] = v;
                return OK;
            }
            CUresult cuModuleLoadData(void **m, const void *image) {
                if (!strstr((const char *)image, ".version")) return 218; /* CUDA_ERROR_INVALID_PTX */
                *m = strdup((const char *)image);
                return OK;
            }
            /* as driver 580 does: PTX ISA up to 9.0; a higher .version fails with ptxas's message in the error log */
            CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
                const char *ptx = (const char *)image, *v = strstr(ptx, ".version ");
                char *err = 0; size_t errSize = 0;
                for (unsigned i = 0; i < n; i++) {
                    if (opts[i] == 5) err = (char *)vals[i];                    /* CU_JIT_ERROR_LOG_BUFFER */
                    if (opts[i] == 6) errSize = (size_t)(uintptr_t)vals[i];     /* ..._SIZE_BYTES */
                }
                int major = 0, minor = 0;
                if (!v || sscanf(v + 9, "%d.%d", &major, &minor) != 2 || major * 10 + minor > 90) {
                    int line = 1;
                    for (const char *c = ptx; v && c < v; c++) line += *c == '\\n';
                    if (err && errSize > 0)
                        snprintf(err, errSize, "ptxas application ptx input, line %d; fatal   : Unsupported .version %d.%d;"
                                 " current version is '9.0'\\nptxas fatal   : Ptx assembly aborted due to errors\\n",
                                 line, major, minor);
                    return 218; /* CUDA_ERROR_INVALID_PTX */
                }
                *m = strdup(ptx);
                return OK;
            }
            CUresult cuModuleUnload(void *m) { free(m); return OK; }
            CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
                std::string want = std::string(".entry ") + name + "(";
                if (!strstr((const char *)m, want.c_str())) return NOT_FOUND;
                for (int i = 0; i < NENTRIES; i++)
                    if (!strcmp(ENTRIES[i].name, name)) { *f = (void *)(intptr_t)(i + 1); return OK; }
                return NOT_FOUND;
            }
            static unsigned g_dynamic_smem[1024]; /* per entry: the dynamic shared memory limit set */
            CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
                int i = (int)(intptr_t)f - 1;
                if (i < 0 || i >= NENTRIES || by != 1 || bz != 1 || bx == 0 || bx > 1024 || gy > 65535 || gz > 65535)
                    return INVALID;
                const Entry &e = ENTRIES[i];
                long long a[32];
                for (int k = 0; k < e.n; k++)
                    a[k] = e.size[k] == 8 ? *(long long *)params[k] : (long long)*(int32_t *)params[k];
                // as the driver: more than 48 KiB of dynamic shared memory needs the function's limit raised first
                if (shared > 48 * 1024 && shared > g_dynamic_smem[i]) return INVALID;
                std::string sym = std::string("emu_") + e.name;
                void (*fn)(const long long *, int, int, int, int, int) =
                    (void (*)(const long long *, int, int, int, int, int))dlsym(g_emu, sym.c_str());
                if (!fn) return NOT_FOUND;
                fn(a, gx, gy, gz, bx, (int)shared);
                return OK;
            }
            /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (8) only, up to an sm_90 block's 227 KiB */
            CUresult cuFuncSetAttribute(void *f, int attrib, int value) {
                int i = (int)(intptr_t)f - 1;
                if (i < 0 || i >= NENTRIES || attrib != 8 || value < 0 || value > 227 * 1024) return INVALID;
                g_dynamic_smem[i] = value;
                return OK;
            }
            /* events: the host clock when recorded (the fake runs every launch synchronously) */
            CUresult cuEventCreate(void **e, unsigned) { *e = calloc(1, sizeof(double)); return *e ? OK : OOM; }
            CUresult cuEventRecord(void *e, void *) {
                struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                *(double *)e = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
                return OK;
            }
            CUresult cuEventSynchronize(void *) { return OK; }
            CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(*(double *)b - *(double *)a); return OK; }
            CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { return cuEventElapsedTime(ms, a, b); }
            CUresult cuEventDestroy_v2(void *e) { free(e); return OK; }
            /* for tools/gpu_sweep_emu.py (gpu_sweep.py's ctypes launches on this fake) */
            CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == OOM ? "CUDA_ERROR_OUT_OF_MEMORY" : "FAKE_ERROR"; return OK; }
            CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == OOM ? "out of memory" : "fake error"; return OK; }
            }
            """;
}
