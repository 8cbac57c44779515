package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.backend.Buffer;
import io.attn.backend.ProbeResult;
import io.attn.tensor.DType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Run by {@link DriverPathEmulatedTest} in a child JVM whose {@code libcuda.so.1} is the {@link FakeDriver}: the
 * whole production path (provider, JCuda JNI, context, pool, module loading, launches) on emulated kernels. Mode
 * {@code parity [filter [precision [default]]]} runs the parity suite (the op and layer cases whose name contains the
 * filter) on every configuration of the provider ({@link io.attn.parity.ParityTarget}: the default and each parity
 * variant; with {@code default}, the default one only) at that precision (default fp32); mode
 * {@code ops [name,name]} runs the named (default: every) {@link CudaOpsChecks} check through the provider; mode {@code oom} checks the pool's
 * trim-and-retry and the out-of-memory error under a small memory limit; mode {@code bench} runs the resident benches
 * ({@code bench attention --resident}, {@code bench encoder-layer --resident}) with the CUDA-event device timer. Exit
 * 0 when everything passed.
 */
public final class DriverPathMain {
    private DriverPathMain() {}

    public static void main(String[] args) throws Exception {
        ProbeResult r = new CudaBackendProvider().probe();
        System.out.println("PROBE " + r);
        if (!r.available()) System.exit(2);
        int failures =
                switch (args[0]) {
                    case "oom" -> oom();
                    case "jit" -> jit();
                    case "bench" -> bench();
                    case "pinned" -> pinned();
                    case "parity" ->
                        parity(
                                args.length > 1 ? args[1] : "",
                                args.length > 2
                                        ? io.attn.engine.Precision.valueOf(args[2].toUpperCase(java.util.Locale.ROOT))
                                        : io.attn.engine.Precision.FP32,
                                args.length > 3 && args[3].equals("default"));
                    default -> ops(args.length > 1 ? List.of(args[1].split(",")) : List.of());
                };
        System.out.println(failures == 0 ? "ALL PASSED" : failures + " FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }

    /**
     * The resident benches through the driver: the device timer (cuEventCreate / Record / Synchronize / ElapsedTime /
     * Destroy) gives a finite, non-negative time around a run; the resident encoder layer's (B, L) output is the mean
     * of the non-resident run's (B, L, E) output; attention resident likewise.
     */
    static int bench() {
        int failures = 0;
        try (io.attn.engine.Engine e = io.attn.engine.Engine.open(
                io.attn.engine.EngineOptions.defaults().withDevice("cuda"))) {
            String[] names = {"encoder-layer", "attention"};
            for (String name : names) {
                try (io.attn.engine.KernelBench full = name.equals("attention")
                                ? io.attn.engine.KernelBench.attention(e, 2, 2, 33, 0, 32, true, false, false, false)
                                : io.attn.engine.KernelBench.encoderLayer(e, 2, 5, 16, 2, 32, false, "relu", false);
                        io.attn.engine.KernelBench res = name.equals("attention")
                                ? io.attn.engine.KernelBench.attention(e, 2, 2, 33, 0, 32, true, false, true, false)
                                : io.attn.engine.KernelBench.encoderLayer(e, 2, 5, 16, 2, 32, false, "relu", true)) {
                    if (!res.timesDevice()) throw new IllegalStateException("no device timer on the cuda backend");
                    double ms = res.runTimedOnDevice();
                    double ms2 = res.runTimedOnDevice(); // twice: the events are reused
                    if (!(ms >= 0 && ms2 >= 0 && Double.isFinite(ms) && Double.isFinite(ms2)))
                        throw new IllegalStateException("device times " + ms + ", " + ms2);
                    io.attn.tensor.Tensor m = res.runOutputs().getFirst();
                    io.attn.tensor.Tensor y = full.runOutputs().getFirst();
                    int[] d = y.shape().dims();
                    int cols = d[d.length - 1], rows = (int) (y.size() / cols);
                    if (m.size() != rows)
                        throw new IllegalStateException("resident output " + m.shape() + " for " + y.shape());
                    double worst = 0;
                    for (int i = 0; i < rows; i++) {
                        double s = 0;
                        for (int c = 0; c < cols; c++) s += y.data()[i * cols + c];
                        worst = Math.max(worst, Math.abs(s / cols - m.data()[i]));
                    }
                    if (worst > 1e-5) throw new IllegalStateException("resident mean differs by " + worst);
                    System.out.printf(
                            java.util.Locale.ROOT,
                            "PASS bench %s resident: device timer %.3f ms, %.3f ms; mean matches (%.1e)%n",
                            name,
                            ms,
                            ms2,
                            worst);
                } catch (RuntimeException ex) {
                    failures++;
                    System.out.println("FAIL bench " + name + ": " + ex);
                    ex.printStackTrace(System.out);
                }
            }
        }
        return failures;
    }

    /**
     * Uploads and downloads through the page-locked staging buffer (run with {@code -Dattn.cuda.pinned=true}): a
     * small copy, one larger than the buffer's 64 MiB (two chunks), and an offset-free round trip of each; prints
     * the staging state.
     */
    static int pinned() {
        int failures = 0;
        try (Backend b = Backends.open("cuda", BackendOptions.defaults()).backend()) {
            CudaBackend c = (CudaBackend) b;
            for (int n : new int[] {1000, 17_000_000}) {
                float[] x = new float[n], y = new float[n];
                for (int i = 0; i < n; i++) x[i] = i * 0.5f - 7;
                Buffer buf = b.allocate(DType.F32, n);
                b.upload(x, n, buf);
                b.download(buf, y, n);
                b.release(buf);
                boolean same = java.util.Arrays.equals(x, y);
                if (!same) failures++;
                System.out.println((same ? "PASS" : "FAIL") + " pinned round trip of " + n + " floats; staging "
                        + c.pinnedState());
            }
        }
        return failures;
    }

    /** The parity suite through the provider: one PASS or FAIL line per configuration; returns the failed cases. */
    static int parity(String filter, io.attn.engine.Precision precision, boolean defaultOnly) {
        int failures = 0;
        for (io.attn.parity.ParityTarget t : io.attn.parity.ParityTarget.of(new CudaBackendProvider(), 0, precision)) {
            if (defaultOnly && t.variant()) continue;
            Backend b;
            try {
                b = t.open();
            } catch (AttnException e) {
                System.out.println("SKIP parity " + t.name() + ": " + e.getMessage());
                continue;
            }
            int failed = 0, ran = 0, skipped = 0;
            try (b) {
                System.out.println("TARGET " + t.name() + ": " + b.description());
                for (var c : t.opCases(io.attn.parity.ParityCases.all()))
                    if (c.name().contains(filter)) {
                        var r = io.attn.parity.ParityHarness.run(c, b);
                        ran++;
                        if (r.unsupported())
                            skipped++; // by design (docs/ops.md: a segmented mask over batch rows, ...)
                        else if (!r.pass()) {
                            failed++;
                            System.out.println("FAIL " + t.name() + " " + c.name() + ": " + r.message());
                        }
                    }
                for (var c : io.attn.parity.LayerCases.cases())
                    if (c.name().contains(filter) && io.attn.parity.LayerCases.unsupported(c, b) != null) skipped++;
                    else if (c.name().contains(filter)) {
                        var r = io.attn.parity.LayerCases.run(c, b, t.layerBound());
                        ran++;
                        if (!r.pass()) {
                            failed++;
                            System.out.println("FAIL " + t.name() + " " + c.name() + ": " + r.message());
                        }
                    }
            }
            System.out.println((failed == 0 ? "PASS parity " : "FAIL parity ") + t.name() + ": "
                    + (ran - failed - skipped) + " of " + ran + " cases (" + skipped + " not supported)");
            failures += failed;
        }
        return failures;
    }

    /** Runs the named checks ({@code only}), or all when empty. */
    static int ops(List<String> only) throws Exception {
        try (Backend b = Backends.open("cuda", BackendOptions.defaults()).backend()) {
            System.out.println("BACKEND " + b.description());
            b.close(); // idempotent with the try's close
        }
        CudaOpsGpuTest t = new CudaOpsGpuTest();
        List<Method> tests = new ArrayList<>();
        for (Class<?> c = CudaOpsGpuTest.class; c != Object.class; c = c.getSuperclass())
            for (Method m : c.getDeclaredMethods())
                if (m.isAnnotationPresent(org.junit.jupiter.api.Test.class)
                        && (only.isEmpty() || only.contains(m.getName()))) tests.add(m);
        int failures = 0;
        for (Method m : tests) {
            m.setAccessible(true);
            try {
                t.needsGpu();
                m.invoke(t);
                System.out.println("PASS " + m.getName());
            } catch (InvocationTargetException e) {
                failures++;
                System.out.println("FAIL " + m.getName() + ": " + e.getCause());
                e.getCause().printStackTrace(System.out);
            }
        }
        return failures;
    }

    /**
     * Every committed PTX file loads through {@code cuModuleLoadDataEx} (the backend loads them all at start), and a
     * PTX file the JIT rejects (ISA 9.1, above what driver 580 reads) fails with one line naming the file and showing
     * the JIT's error log.
     */
    static int jit() {
        try (Backend b = Backends.open("cuda", BackendOptions.defaults()).backend()) {
            System.out.println("PASS every committed PTX file loaded: " + b.description());
            byte[] ptx = io.attn.kernels.Kernels.ptx("elementwise");
            String text = new String(ptx, 0, ptx.length - 1, java.nio.charset.StandardCharsets.US_ASCII);
            if (!text.contains("\n.version 9.0\n")) {
                System.out.println("FAIL elementwise.ptx does not declare .version 9.0");
                return 1;
            }
            byte[] bad = (text.replace("\n.version 9.0\n", "\n.version 9.1\n") + "\0")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            try {
                KernelModule.load("elementwise", bad);
                System.out.println("FAIL a PTX file of ISA 9.1 loaded");
                return 1;
            } catch (AttnException e) {
                String m = e.getMessage();
                boolean ok = m.startsWith(
                                "loading kernel file elementwise.ptx failed (cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX)")
                        && m.contains("JIT error log: ptxas application ptx input, line ")
                        && m.contains("Unsupported .version 9.1; current version is '9.0'")
                        && m.lines().count() == 1;
                System.out.println((ok ? "PASS " : "FAIL ") + m);
                return ok ? 0 : 1;
            }
        }
    }

    /** Run with ATTN_FAKE_MEM=1000000 (bytes). */
    static int oom() {
        int failures = 0;
        try (Backend b = new CudaBackendProvider().create(BackendOptions.defaults())) {
            Buffer a = b.allocate(DType.F32, 150_000); // 600 kB (class 640 kB)
            b.release(a); // cached by the pool
            Buffer c = b.allocate(DType.F32, 200_000); // 800 kB (class 896 kB): fails, cache freed, retry succeeds
            System.out.println("PASS trim and retry: " + c.capacity());
            try {
                b.allocate(DType.F32, 100_000); // 400 kB (class 448 kB) more: over the limit, nothing cached
                System.out.println("FAIL expected DEVICE_OUT_OF_MEMORY");
                failures++;
            } catch (AttnException e) {
                boolean ok = e.code() == AttnException.Code.DEVICE_OUT_OF_MEMORY
                        && e.getMessage().contains("cuMemAlloc(458752 bytes for a request of 400000")
                        && e.getMessage().contains("free of");
                System.out.println((ok ? "PASS " : "FAIL ") + e.code() + ": " + e.getMessage());
                if (!ok) failures++;
            }
        }
        return failures;
    }
}
