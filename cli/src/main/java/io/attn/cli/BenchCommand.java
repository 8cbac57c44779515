package io.attn.cli;

import io.attn.backend.Backend;
import io.attn.backend.Backends;
import io.attn.backend.Buffer;
import io.attn.cpu.CpuInfo;
import io.attn.engine.Request;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.nn.LayerConfig;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.LinkedHashMap;
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
 * (B, H, L) mean, to time the attention kernel itself (as PyTorch timings of tensors already on the GPU do).
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
    static int measure(
            String bench, Backends.Selection sel, int threads, Timing t, double flops, String shape, Runnable call) {
        long end = System.nanoTime() + t.warmupMs * 1_000_000;
        int warm = 0;
        do {
            call.run();
            warm++;
        } while (System.nanoTime() < end || warm < 2);
        double[] ms = new double[Math.max(t.minRuns, 1) * 64], cpu = new double[ms.length];
        // the calling thread's CPU time per call: at 1 thread all the work, and much less sensitive than wall time to
        // other processes on a shared machine (they take the core, not this thread's CPU time)
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        int n = 0;
        long start = System.nanoTime();
        while (n < ms.length && (n < t.minRuns || System.nanoTime() - start < t.minMs * 1_000_000)) {
            long c = mx.getCurrentThreadCpuTime(), s = System.nanoTime();
            call.run();
            ms[n] = (System.nanoTime() - s) / 1e6;
            cpu[n++] = (mx.getCurrentThreadCpuTime() - c) / 1e6;
        }
        double[] r = Arrays.copyOf(ms, n);
        Arrays.sort(r);
        double median = n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
        double[] rc = Arrays.copyOf(cpu, n);
        Arrays.sort(rc);
        double cpuMedian = n % 2 == 1 ? rc[n / 2] : (rc[n / 2 - 1] + rc[n / 2]) / 2;
        double gflops = flops / (median * 1e6);
        System.out.printf(Locale.ROOT, "bench %s %s on %s%n", bench, shape, sel.reason());
        System.out.printf(
                Locale.ROOT, "  cpu: %s; kernels: %s%n", CpuInfo.host().describe(), CpuInfo.kernels());
        System.out.printf(
                Locale.ROOT,
                "  runs %d (after %d warm-up), median %.3f ms, min %.3f ms, max %.3f ms, %.1f GFLOP/s%n",
                n,
                warm,
                median,
                r[0],
                r[n - 1],
                gflops);
        System.out.printf(
                Locale.ROOT,
                "{\"bench\":\"%s\",\"device\":\"%s\",\"threads\":%d,\"median_ms\":%.4f,\"gflops\":%.2f,\"min_ms\":%.4f,\"runs\":%d,\"shape\":\"%s\",\"thread_cpu_ms\":%.4f,\"cpu\":%s}%n",
                bench,
                sel.backend().name(),
                threads,
                median,
                gflops,
                r[0],
                n,
                shape,
                cpuMedian,
                CpuInfo.host().json());
        return 0;
    }

    static Tensor random(SplittableRandom r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) (2 * r.nextDouble() - 1);
        return t;
    }

    static int threadsOf(DeviceOptions d) {
        return d.threads > 0 ? d.threads : Runtime.getRuntime().availableProcessors();
    }

    static int runGraph(
            String bench,
            DeviceOptions device,
            Timing t,
            double flops,
            String shape,
            Graph graph,
            Map<String, Tensor> feeds,
            boolean into) {
        Backends.Selection sel = device.open();
        try (Backend b = sel.backend();
                Executor ex = new Executor(b, graph)) {
            if (!into) return measure(bench, sel, threadsOf(device), t, flops, shape, () -> ex.run(feeds));
            // outputs into arrays allocated once, as NumPy's matmul(..., out=) does
            float[][] outs = new float[graph.outputs().size()][];
            for (int i = 0; i < outs.length; i++)
                outs[i] = new float[(int) graph.outputs().get(i).shape().size()];
            return measure(bench, sel, threadsOf(device), t, flops, shape + " into", () -> ex.runInto(feeds, outs));
        }
    }

    /** Option of the benches that run one graph: outputs into arrays allocated once. */
    static final String INTO_HELP = "Write the outputs into arrays allocated once (Executor.runInto, like NumPy's"
            + " out=) instead of a fresh array per call.";

    /** As {@link #runGraph}, with every input uploaded once into a backend buffer bound for all runs. */
    static int runResident(
            String bench,
            DeviceOptions device,
            Timing t,
            double flops,
            String shape,
            Graph graph,
            Map<String, Tensor> feeds) {
        Backends.Selection sel = device.open();
        try (Backend b = sel.backend();
                Executor ex = new Executor(b, graph)) {
            Map<String, Buffer> bound = new LinkedHashMap<>();
            try {
                for (var e : feeds.entrySet()) {
                    float[] d = e.getValue().data();
                    Buffer buf = b.allocate(DType.F32, d.length);
                    bound.put(e.getKey(), buf);
                    b.upload(d, d.length, buf);
                }
                return measure(bench, sel, threadsOf(device), t, flops, shape, () -> ex.run(Map.of(), bound));
            } finally {
                for (Buffer buf : bound.values()) b.release(buf);
            }
        }
    }

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
            SplittableRandom r = new SplittableRandom(1);
            GraphBuilder g = new GraphBuilder();
            Node a = g.input("a", batch, m, k);
            if (weights) {
                Node w = g.constant("w", random(r, n, k));
                String shape = String.format("batch=%d m=%d n=%d k=%d weights B^T", batch, m, n, k);
                Map<String, Tensor> feeds = Map.of("a", random(r, batch, m, k));
                Node c = g.matmul(a, w, false, true, 1f);
                return runGraph("gemm", device, timing, 2.0 * batch * m * n * k, shape, g.build(c), feeds, into);
            }
            Node b = transB ? g.input("b", batch, n, k) : g.input("b", batch, k, n);
            Node c = g.matmul(a, b, false, transB, 1f);
            Map<String, Tensor> feeds =
                    Map.of("a", random(r, batch, m, k), "b", transB ? random(r, batch, n, k) : random(r, batch, k, n));
            String shape = String.format("batch=%d m=%d n=%d k=%d%s", batch, m, n, k, transB ? " B^T" : "");
            return runGraph("gemm", device, timing, 2.0 * batch * m * n * k, shape, g.build(c), feeds, into);
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
            int s = kvSeq > 0 ? kvSeq : seq;
            SplittableRandom r = new SplittableRandom(2);
            GraphBuilder g = new GraphBuilder();
            Node q = g.input("q", batch, heads, seq, headDim);
            Node k = g.input("k", batch, heads, s, headDim);
            Node v = g.input("v", batch, heads, s, headDim);
            MaskSpec mask = causal ? MaskSpec.CAUSAL : MaskSpec.NONE;
            float scale = (float) (1 / Math.sqrt(headDim));
            Node out;
            Node w = null;
            if (weights) {
                w = g.attentionWeights(q, k, scale, mask, null, null); // as ScaledDotProductAttention
                out = g.matmul(w, v);
            } else out = g.attention(q, k, v, scale, mask, null, null);
            Map<String, Tensor> feeds = Map.of(
                    "q", random(r, batch, heads, seq, headDim),
                    "k", random(r, batch, heads, s, headDim),
                    "v", random(r, batch, heads, s, headDim));
            // visible (unmasked) score entries: causal keeps j <= i
            double pairs = 0;
            for (int i = 0; i < seq; i++) pairs += causal ? Math.min(i + 1, s) : s;
            double flops = 4.0 * batch * heads * headDim * pairs;
            String shape = String.format(
                    "B=%d H=%d L=%d S=%d D=%d%s%s",
                    batch, heads, seq, s, headDim, causal ? " causal" : "", weights ? " +weights" : "");
            if (into && resident)
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--into and --resident exclude each other");
            if (resident) {
                Node o = g.mean(out, 3);
                Graph graph = weights ? g.build(o, g.mean(w, 3)) : g.build(o);
                return runResident("attention", device, timing, flops, shape + " resident", graph, feeds);
            }
            return runGraph(
                    "attention", device, timing, flops, shape, weights ? g.build(out, w) : g.build(out), feeds, into);
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

        @Mixin
        Timing timing;

        @Mixin
        DeviceOptions device;

        @Override
        public Integer call() {
            SplittableRandom r = new SplittableRandom(3);
            LayerConfig lc = new LayerConfig(dModel, heads, ffn, activation, 1e-5f, normFirst, true);
            ModelConfig mc = new ModelConfig(ModelConfig.Kind.TransformerEncoderLayer, lc, 0, 0, true, 0, false, 0, 0);
            Map<String, Tensor> sd = new LinkedHashMap<>();
            float a = (float) (1 / Math.sqrt(dModel));
            sd.put("self_attn.in_proj_weight", scaled(random(r, 3 * dModel, dModel), a));
            sd.put("self_attn.in_proj_bias", scaled(random(r, 3 * dModel), 0.1f));
            sd.put("self_attn.out_proj.weight", scaled(random(r, dModel, dModel), a));
            sd.put("self_attn.out_proj.bias", scaled(random(r, dModel), 0.1f));
            sd.put("linear1.weight", scaled(random(r, ffn, dModel), a));
            sd.put("linear1.bias", scaled(random(r, ffn), 0.1f));
            sd.put("linear2.weight", scaled(random(r, dModel, ffn), (float) (1 / Math.sqrt(ffn))));
            sd.put("linear2.bias", scaled(random(r, dModel), 0.1f));
            for (String n : new String[] {"norm1", "norm2"}) {
                sd.put(n + ".weight", Tensor.of(filled(dModel, 1f), dModel));
                sd.put(n + ".bias", Tensor.zeros(dModel));
            }
            Tensor x = random(r, batch, seq, dModel);
            double flops =
                    2.0 * batch * seq * (4.0 * dModel * dModel + 2.0 * dModel * ffn) + 4.0 * batch * seq * seq * dModel;
            String shape = String.format(
                    "B=%d L=%d E=%d H=%d F=%d %s %s",
                    batch, seq, dModel, heads, ffn, normFirst ? "pre-norm" : "post-norm", activation);
            Backends.Selection sel = device.open();
            try (Backend b = sel.backend();
                    Model model = Model.load(mc, new StateDict(sd, "bench"))) {
                Request in = Request.of(x);
                return measure("encoder-layer", sel, threadsOf(device), timing, flops, shape, () -> model.run(b, in));
            }
        }

        private static Tensor scaled(Tensor t, float s) {
            for (int i = 0; i < t.size(); i++) t.data()[i] *= s;
            return t;
        }

        private static float[] filled(int n, float v) {
            float[] f = new float[n];
            Arrays.fill(f, v);
            return f;
        }
    }
}
