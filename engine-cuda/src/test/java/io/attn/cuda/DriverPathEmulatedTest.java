package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The production driver path without a GPU: a child JVM whose dynamic linker finds {@link FakeDriver}'s {@code
 * libcuda.so.1} first (LD_LIBRARY_PATH) runs {@link DriverPathMain}. This exercises the provider, JCuda's JNI,
 * DevPtr/RawStream handles, KernelArgs packing into {@code cuLaunchKernel}, the pool and module loading, with the
 * kernels emulated on the host. Skipped without g++ (and where a real driver would shadow the fake is irrelevant:
 * LD_LIBRARY_PATH is searched first). Tagged {@code long} (child JVMs running emulated kernels, about a minute): CI's
 * {@code ./attn test -Plong-tests} runs it.
 */
@Tag("long")
class DriverPathEmulatedTest {
    @TempDir
    Path dir;

    Path emu;

    /** More environment for the next children (the fake driver's switches). */
    final java.util.Map<String, String> extraEnv = new java.util.HashMap<>();

    @BeforeEach
    void needsCompiler() throws Exception {
        KernelEmulator k = KernelEmulator.get();
        Assumptions.assumeTrue(k != null, "no kernel emulator: " + KernelEmulator.failure());
        emu = k.library();
        FakeDriver.build(dir);
    }

    @Test
    void cublasPathsThroughFfmAndJCublas2() throws Exception {
        FakeDriver.buildCublas(dir); // libcublas.so.12 on the child's LD_LIBRARY_PATH: FFM and JCublas2 both load it
        String out = child(null, "ops");
        assertTrue(out.contains("gemm: cuBLAS via java.lang.foreign (" + dir.resolve("libcublas.so.12") + ")"), out);
        assertTrue(out.contains("ALL PASSED"), out);
        // the parity suite's matrix products and attention on every configuration the provider lists: cuBLAS through
        // FFM (the default), through JCublas2, our GEMM kernel; fused and unfused attention
        out = child(null, "parity", "matmul");
        assertTrue(out.contains("TARGET cuda: cuda: attn fake GPU"), out);
        assertTrue(out.contains("gemm: cuBLAS 12.99.0 via java.lang.foreign"), out);
        assertTrue(out.contains("gemm: cuBLAS 12.99.0 via JCublas2"), out);
        for (String t : List.of("cuda", "cuda gemm=kernel", "cuda gemm=jcublas"))
            assertTrue(out.contains("PASS parity " + t + ": "), t + ":\n" + out);
        // (every attention case on every attention path is judged under emulation by the parity suite itself; through
        // the driver, a few suffice to prove each path's launches)
        out = child(null, "parity", "attention large scores");
        for (String t : List.of("cuda", "cuda attention=fused", "cuda attention=unfused", "cuda flash.fp32=simt"))
            assertTrue(out.contains("PASS parity " + t + ": "), t + ":\n" + out);
        assertTrue(out.contains("ALL PASSED"), out);
        // the flash kernels (the default attention path) through JCuda and the fake driver (sm_90): in fp32 (the
        // 3xTF32 kernels, the default on sm_80+, on the tf32 mma stand-in), and in bf16 / fp16 on the FA2 kernels (mma,
        // ldmatrix and cp.async stand-ins; above 48 KiB of dynamic shared memory only after cuFuncSetAttribute, which
        // the fake driver checks). The parity suite judges every tile case at all three precisions under emulation
        // (ParityTest's cuda-emulated targets); through the driver the tile case with two query tiles of 128 rows at
        // each head size (32, 64, 128: one kernel instance each, D128's the largest shared memory) proves the launches
        for (String precision : List.of("fp32", "bf16", "fp16")) {
            out = child(null, "parity", "attention tiles causal 2 query tiles of 128", precision, "default");
            String t = precision.equals("fp32") ? "cuda" : "cuda precision=" + precision;
            assertTrue(out.contains("PASS parity " + t + ": 3 of 3 cases (0 not supported)"), t + ":\n" + out);
            assertTrue(out.contains("ALL PASSED"), out);
        }
    }

    String child(String memLimit, String... mode) throws Exception {
        return childJvm(List.of(), memLimit, mode);
    }

    String childJvm(List<String> jvm, String memLimit, String... mode) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(
                        java, "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED")
                .redirectErrorStream(true);
        pb.command().addAll(jvm);
        pb.command().addAll(List.of("-cp", System.getProperty("java.class.path"), DriverPathMain.class.getName()));
        pb.command().addAll(List.of(mode));
        pb.environment().put("LD_LIBRARY_PATH", dir.toString());
        pb.environment().put("ATTN_EMU_LIB", emu.toString());
        if (memLimit != null) pb.environment().put("ATTN_FAKE_MEM", memLimit);
        pb.environment().putAll(extraEnv);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "child timed out:\n" + out);
        assertEquals(0, p.exitValue(), "child failed:\n" + out);
        return out;
    }

    @Test
    void someOpsThroughJCudaAndTheFakeDriverWithoutCublas() throws Exception {
        // the cuBLAS test runs every check; here a few, with the built-in GEMM kernel (no cuBLAS on the path)
        String out = child(
                null,
                "ops",
                "runIntoDownloadsIntoTheCallersArrays,badEmbeddingIdIsBadInputAndSteadyStateAllocatesNothing");
        assertTrue(
                out.contains(
                        "PROBE cuda: available, attn fake GPU (host emulation) (device 0 of 1, sm_90, 4 SMs,"
                                + " 1.0 GiB), CUDA driver API 13.0; gemm: built-in SGEMM kernel, because no cuBLAS library found"),
                out);
        assertTrue(out.contains("BACKEND cuda: attn fake GPU"), out);
        for (String name : List.of(
                "runIntoDownloadsIntoTheCallersArrays", "badEmbeddingIdIsBadInputAndSteadyStateAllocatesNothing"))
            assertTrue(out.contains("PASS " + name), name + ":\n" + out);
        // and the parity suite's softmax cases (every mask kind, fully masked rows) through the fake driver
        out = child(null, "parity", "softmax");
        assertTrue(out.contains("PASS parity cuda: "), out);
        assertTrue(out.contains("ALL PASSED"), out);
    }

    @Test
    void residentBenchesAndTheirDeviceTimer() throws Exception {
        String out = child(null, "bench");
        assertTrue(out.contains("PASS bench encoder-layer resident: device timer "), out);
        assertTrue(out.contains("PASS bench attention resident: device timer "), out);
        assertTrue(out.contains("ALL PASSED"), out);
    }

    @Test
    void pinnedStagingCopiesRoundTripAndTheOpsPass() throws Exception {
        List<String> on = List.of("-Dattn.cuda.pinned=true", "-Xmx1g");
        String out = childJvm(on, null, "pinned");
        assertTrue(out.contains("PASS pinned round trip of 1000 floats; staging on, 1048576 bytes"), out);
        assertTrue(out.contains("PASS pinned round trip of 17000000 floats; staging on, 67108864 bytes"), out);
        assertTrue(out.contains("ALL PASSED"), out);
        // every upload and download of the ops checks (runInto's outputs, the embedding error word's neighbours)
        out = childJvm(on, null, "ops", "runIntoDownloadsIntoTheCallersArrays");
        assertTrue(out.contains("PASS runIntoDownloadsIntoTheCallersArrays"), out);
        // off by default, and a failing cuMemHostAlloc falls back to the pageable copies
        out = child(null, "pinned");
        assertTrue(out.contains("PASS pinned round trip of 1000 floats; staging off"), out);
        extraEnv.put("ATTN_FAKE_NO_PINNED", "1");
        out = childJvm(on, null, "pinned");
        assertTrue(out.contains("PASS pinned round trip of 17000000 floats; staging failed (cuMemHostAlloc("), out);
    }

    @Test
    void ptxJitErrorsNameTheFileAndShowTheLog() throws Exception {
        String out = child(null, "jit");
        assertTrue(out.contains("PASS every committed PTX file loaded"), out);
        assertTrue(
                out.contains(
                        "PASS loading kernel file elementwise.ptx failed (cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX);"
                                + " JIT error log: ptxas application ptx input, line "),
                out);
    }

    @Test
    void poolTrimsItsCacheThenReportsOutOfMemory() throws Exception {
        String out = child("1000000", "oom");
        assertTrue(out.contains("PASS trim and retry"), out);
        assertTrue(out.contains("PASS DEVICE_OUT_OF_MEMORY"), out);
    }
}
