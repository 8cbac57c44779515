package io.attn.cli;

import io.attn.engine.AttnModel;
import io.attn.engine.Devices;
import io.attn.engine.Engine;
import io.attn.engine.KernelBench;
import io.attn.engine.Request;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn bench}: warm up, repeat, print a summary and, as the last line, one JSON object {@code {"bench", "device",
 * "threads", "median_ms", "gflops", ...}}. Each timed call is one executor run (inputs in, outputs out), so on a GPU it
 * includes the host transfers; {@code attention --resident} keeps the inputs on the backend and downloads only a
 * (B, H, L) mean, to time the attention kernel itself (as PyTorch timings of tensors already on the GPU do); {@code
 * encoder-layer --resident} likewise keeps x on the device and downloads a (B, L) mean. Where the backend times device
 * work (CUDA events: {@link KernelBench#runTimedOnDevice}), the JSON also has {@code "device_ms"}: the median
 * device time of the same runs, beside the wall-clock {@code "median_ms"}.
 */
@Command(
        name = "bench",
        description =
                "Time GEMM, attention, an encoder layer, generation or embedding; the last line is a JSON summary.",
        subcommands = {
            BenchCommand.Gemm.class,
            BenchCommand.Attention.class,
            BenchCommand.EncoderLayer.class,
            BenchGenerate.class,
            BenchEmbed.class,
            BenchServe.class
        })
final class BenchCommand {

    static final class Timing {
        @Option(names = "--warmup-ms", description = "Warm-up time (default: ${DEFAULT-VALUE}).")
        long warmupMs = 1000;

        @Option(names = "--min-ms", description = "Minimum measured time (default: ${DEFAULT-VALUE}).")
        long minMs = 2000;

        @Option(names = "--min-runs", description = "Minimum measured runs (default: ${DEFAULT-VALUE}).")
        int minRuns = 5;
    }

    /** Runs {@code call} per the timing options and prints the summary; returns the exit code. */
    static int measure(String bench, Engine engine, int threads, Timing t, double flops, String shape, Runnable call) {
        return measure(bench, engine, threads, t, flops, shape, call, null);
    }

    /**
     * As {@link #measure(String, Engine, int, Timing, double, String, Runnable)}; with {@code timedCall} (one call that
     * returns its device time in ms: {@link KernelBench#runTimedOnDevice}), each measured run is that call, and the
     * JSON gets {@code "device_ms"}, the median of those times.
     */
    static int measure(
            String bench,
            Engine engine,
            int threads,
            Timing t,
            double flops,
            String shape,
            Runnable call,
            java.util.function.DoubleSupplier timedCall) {
        long end = System.nanoTime() + t.warmupMs * 1_000_000;
        int warm = 0;
        do {
            call.run();
            warm++;
        } while (System.nanoTime() < end || warm < 2);
        double[] ms = new double[Math.max(t.minRuns, 1) * 64], cpu = new double[ms.length], dev = new double[ms.length];
        // the calling thread's CPU time per call: at 1 thread all the work, and much less sensitive than wall time to
        // other processes on a shared machine (they take the core, not this thread's CPU time)
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        int n = 0;
        long start = System.nanoTime();
        while (n < ms.length && (n < t.minRuns || System.nanoTime() - start < t.minMs * 1_000_000)) {
            long c = mx.getCurrentThreadCpuTime(), s = System.nanoTime();
            if (timedCall != null) dev[n] = timedCall.getAsDouble();
            else call.run();
            ms[n] = (System.nanoTime() - s) / 1e6;
            cpu[n++] = (mx.getCurrentThreadCpuTime() - c) / 1e6;
        }
        double[] r = Arrays.copyOf(ms, n);
        Arrays.sort(r);
        double median = n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
        double[] rc = Arrays.copyOf(cpu, n);
        Arrays.sort(rc);
        double cpuMedian = n % 2 == 1 ? rc[n / 2] : (rc[n / 2 - 1] + rc[n / 2]) / 2;
        double[] rd = Arrays.copyOf(dev, n);
        Arrays.sort(rd);
        double devMedian = n % 2 == 1 ? rd[n / 2] : (rd[n / 2 - 1] + rd[n / 2]) / 2;
        String devJson = timedCall == null ? "" : String.format(Locale.ROOT, ",\"device_ms\":%.4f", devMedian);
        double gflops = flops / (median * 1e6);
        System.out.printf(Locale.ROOT, "bench %s %s on %s%n", bench, shape, engine.description());
        System.out.printf(Locale.ROOT, "  cpu: %s; kernels: %s%n", Devices.hostCpu(), Devices.cpuKernels());
        System.out.printf(
                Locale.ROOT,
                "  runs %d (after %d warm-up), median %.3f ms, min %.3f ms, max %.3f ms, %.1f GFLOP/s%n",
                n,
                warm,
                median,
                r[0],
                r[n - 1],
                gflops);
        if (timedCall != null)
            System.out.printf(
                    Locale.ROOT,
                    "  device time (CUDA events) median %.3f ms, min %.3f ms, %.1f GFLOP/s%n",
                    devMedian,
                    rd[0],
                    flops / (devMedian * 1e6));
        System.out.printf(
                Locale.ROOT,
                "{\"bench\":\"%s\",\"device\":\"%s\",\"threads\":%d,\"median_ms\":%.4f,\"gflops\":%.2f,\"min_ms\":%.4f,\"runs\":%d,\"shape\":\"%s\",\"thread_cpu_ms\":%.4f%s,\"cpu\":%s}%n",
                bench,
                engine.device(),
                threads,
                median,
                gflops,
                r[0],
                n,
                shape,
                cpuMedian,
                devJson,
                Devices.hostCpuJson());
        return 0;
    }

    static Tensor random(SplittableRandom r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) (2 * r.nextDouble() - 1);
        return t;
    }

    static int threadsOf(DeviceOptions d) {
        return d.threads > 0 ? d.threads : io.attn.engine.EngineOptions.defaultThreads();
    }

    /** Opens the engine, builds the kernel with {@code make}, times it. */
    static int runKernel(
            String bench, DeviceOptions device, Timing t, java.util.function.Function<Engine, KernelBench> make) {
        try (Engine engine = device.open();
                KernelBench k = make.apply(engine)) {
            return measure(
                    bench,
                    engine,
                    threadsOf(device),
                    t,
                    k.flops(),
                    k.shape(),
                    k::run,
                    k.timesDevice() ? k::runTimedOnDevice : null);
        }
    }

    /** Option of the benches that run one kernel: outputs into arrays allocated once. */
    static final String INTO_HELP =
            "Write the outputs into arrays allocated once (like NumPy's out=) instead of a" + " fresh array per call.";

    @Command(name = "gemm", description = "Batched SGEMM C = A . B.")
    static final class Gemm implements Callable<Integer> {
        @Option(names = "--m", required = true)
        int m;

        @Option(names = "--n", required = true)
        int n;

        @Option(names = "--k", required = true)
        int k;

        @Option(names = "--batch", description = "Batch count (default: ${DEFAULT-VALUE}).")
        int batch = 1;

        @Option(names = "--trans-b", description = "Use B^T (B stored (N, K)).")
        boolean transB;

        @Option(
                names = "--weights",
                description = "B is a layer's weight, as in a Linear: a constant (N, K) used as B^T, shared by the"
                        + " batch (the CPU packs it once, on the first call; NumPy's peer: A @ W.T).")
        boolean weights;

        @Option(names = "--into", description = INTO_HELP)
        boolean into;

        @Mixin
        Timing timing;

        @Mixin
        DeviceOptions device;

        @Override
        public Integer call() {
            return runKernel("gemm", device, timing, e -> KernelBench.gemm(e, batch, m, n, k, transB, weights, into));
        }
    }

    @Command(name = "attention", description = "Scaled dot-product attention, fused, or unfused with --weights.")
    static final class Attention implements Callable<Integer> {
        @Option(names = "--batch", required = true)
        int batch;

        @Option(names = "--heads", required = true)
        int heads;

        @Option(names = "--seq", required = true, description = "Query length L.")
        int seq;

        @Option(names = "--kv-seq", description = "Key length S (default: L).")
        int kvSeq;

        @Option(names = "--head-dim", required = true)
        int headDim;

        @Option(names = "--causal")
        boolean causal;

        @Option(
                names = "--window",
                description = "A sliding window: keys within N positions on either side of each query (|i - j| <= N,"
                        + " ModernBERT's local layers with local_attention = 2N; with --causal the left side only).")
        int window = -1;

        @Option(names = "--weights", description = "Also return the (B, H, L, S) weights (unfused path).")
        boolean weights;

        @Option(
                names = "--resident",
                description = "Upload q, k, v once and keep them on the backend; each run downloads only the mean"
                        + " over the head dim (times the kernels, not the transfers).")
        boolean resident;

        @Option(names = "--into", description = INTO_HELP)
        boolean into;

        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        Timing timing;

        @Mixin
        DeviceOptions device;

        @Override
        public Integer call() {
            if (into && resident)
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--into and --resident exclude each other");
            return runKernel(
                    "attention",
                    device,
                    timing,
                    e -> KernelBench.attention(
                            e, batch, heads, seq, kvSeq, headDim, causal, window, weights, resident, into));
        }
    }

    @Command(name = "encoder-layer", description = "nn.TransformerEncoderLayer (post-norm, relu) with random weights.")
    static final class EncoderLayer implements Callable<Integer> {
        @Option(names = "--batch", required = true)
        int batch;

        @Option(names = "--seq", required = true)
        int seq;

        @Option(names = "--d-model", required = true)
        int dModel;

        @Option(names = "--heads", required = true)
        int heads;

        @Option(names = "--ffn", required = true)
        int ffn;

        @Option(names = "--norm-first", description = "Pre-norm instead of post-norm.")
        boolean normFirst;

        @Option(names = "--activation", description = "relu or gelu (default: ${DEFAULT-VALUE}).")
        String activation = "relu";

        @Option(
                names = "--resident",
                description = "Upload x once and keep it on the backend; each run downloads only the mean over the"
                        + " model dimension (times the layer's device work, not the transfers).")
        boolean resident;

        @Mixin
        Timing timing;

        @Mixin
        DeviceOptions device;

        @Override
        public Integer call() {
            if (resident)
                return runKernel(
                        "encoder-layer",
                        device,
                        timing,
                        e -> KernelBench.encoderLayer(e, batch, seq, dModel, heads, ffn, normFirst, activation, true));
            SplittableRandom r = new SplittableRandom(3);
            String config = KernelBench.encoderLayerConfig(dModel, heads, ffn, normFirst, activation);
            Map<String, Tensor> sd = KernelBench.encoderLayerWeights(r, dModel, ffn);
            Tensor x = random(r, batch, seq, dModel);
            double flops =
                    2.0 * batch * seq * (4.0 * dModel * dModel + 2.0 * dModel * ffn) + 4.0 * batch * seq * seq * dModel;
            String shape = String.format(
                    "B=%d L=%d E=%d H=%d F=%d %s %s",
                    batch, seq, dModel, heads, ffn, normFirst ? "pre-norm" : "post-norm", activation);
            try (Engine engine = device.open();
                    AttnModel model = engine.loadOwned(config, sd, "bench")) {
                Request in = Request.of(x);
                return measure("encoder-layer", engine, threadsOf(device), timing, flops, shape, () -> model.run(in));
            }
        }
    }
}
