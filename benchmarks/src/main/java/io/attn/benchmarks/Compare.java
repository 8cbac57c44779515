package io.attn.benchmarks;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Same-run comparison with ONNX Runtime: builds one {@link Workload}, checks that both engines give the same output,
 * warms both up, then alternates single calls (ours, ORT, ours, ORT, ...) for {@code --seconds} so both see the same
 * machine load, and prints both medians and the speed-up {@code ort_median / our_median}; the last line is JSON.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -cp benchmarks/target/benchmarks.jar io.attn.benchmarks.Compare \
 *     attention --batch 8 --heads 8 --seq 512 --head-dim 64 [--kv-seq S] [--causal] --threads 1 [--seconds 10]
 *     encoder-layer --batch 8 --seq 512 --d-model 512 --heads 8 --ffn 2048 --threads 1
 *     gemm --m 1024 --n 1024 --k 1024 [--batch N] [--trans-b] --threads 1
 * </pre>
 */
public final class Compare {
    private Compare() {}

    public static void main(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String key = args[i].replaceFirst("^--", "");
            if (i + 1 < args.length && !args[i + 1].startsWith("--")) o.put(key, args[++i]);
            else o.put(key, "true");
        }
        int threads = num(o, "threads", 1);
        double seconds = Double.parseDouble(o.getOrDefault("seconds", "8"));
        try (Workload w = create(args[0], o, threads)) {
            System.out.printf(
                    Locale.ROOT,
                    "cpu: %s; kernels: %s; ONNX Runtime %s%n",
                    io.attn.cpu.CpuInfo.host().describe(),
                    io.attn.cpu.CpuInfo.kernels(),
                    ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion());
            System.out.printf(
                    Locale.ROOT,
                    "%s %s, %d thread(s): max |attn - ort| = %.3g%n",
                    w.name,
                    w.shape,
                    threads,
                    w.maxAbsDiff());
            double[] ours = new double[100_000], ort = new double[100_000];
            double[] oursCpu = new double[100_000], ortCpu = new double[100_000];
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long warmEnd = System.nanoTime() + (long) (1e9 * Math.min(3, seconds / 3));
            while (System.nanoTime() < warmEnd) {
                w.ours();
                w.ort();
            }
            int n = 0;
            long end = System.nanoTime() + (long) (1e9 * seconds);
            while (n < 5 || (System.nanoTime() < end && n < ours.length)) {
                long c0 = mx.getCurrentThreadCpuTime(), t0 = System.nanoTime();
                w.ours();
                long c1 = mx.getCurrentThreadCpuTime(), t1 = System.nanoTime();
                w.ort();
                long c2 = mx.getCurrentThreadCpuTime(), t2 = System.nanoTime();
                oursCpu[n] = (c1 - c0) / 1e6;
                ortCpu[n] = (c2 - c1) / 1e6;
                ours[n] = (t1 - t0) / 1e6;
                ort[n++] = (t2 - t1) / 1e6;
            }
            double mo = median(ours, n), mr = median(ort, n);
            System.out.printf(
                    Locale.ROOT,
                    "  attn: median %.3f ms (%.1f GFLOP/s)   ort: median %.3f ms (%.1f GFLOP/s)"
                            + "   speed-up ort/attn %.3fx over %d interleaved pairs%n",
                    mo,
                    w.flops / mo / 1e6,
                    mr,
                    w.flops / mr / 1e6,
                    mr / mo,
                    n);
            double co = median(oursCpu, n), cr = median(ortCpu, n);
            if (threads == 1) // both engines compute on the calling thread: its CPU time is less sensitive to load
            System.out.printf(
                        Locale.ROOT,
                        "  calling-thread CPU time: attn %.3f ms, ort %.3f ms, ratio %.3fx%n",
                        co,
                        cr,
                        cr / co);
            System.out.printf(
                    Locale.ROOT,
                    "{\"bench\":\"%s\",\"shape\":\"%s\",\"threads\":%d,\"attn_median_ms\":%.4f,"
                            + "\"ort_median_ms\":%.4f,\"speedup\":%.4f,\"pairs\":%d,\"ort\":\"%s\",\"cpu\":%s}%n",
                    w.name,
                    w.shape,
                    threads,
                    mo,
                    mr,
                    mr / mo,
                    n,
                    ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion(),
                    io.attn.cpu.CpuInfo.host().json());
        }
    }

    static Workload create(String kind, Map<String, String> o, int threads) {
        return switch (kind) {
            case "gemm" ->
                new Workload.Gemm(
                        num(o, "batch", 1),
                        num(o, "m", 1024),
                        num(o, "n", 1024),
                        num(o, "k", 1024),
                        o.containsKey("trans-b"),
                        threads);
            case "attention" -> {
                int l = num(o, "seq", 512);
                yield new Workload.Attention(
                        num(o, "batch", 8),
                        num(o, "heads", 8),
                        l,
                        num(o, "kv-seq", l),
                        num(o, "head-dim", 64),
                        o.containsKey("causal"),
                        threads);
            }
            case "encoder-layer" ->
                new Workload.EncoderLayer(
                        num(o, "batch", 8),
                        num(o, "seq", 512),
                        num(o, "d-model", 512),
                        num(o, "heads", 8),
                        num(o, "ffn", 2048),
                        threads);
            default ->
                throw new IllegalArgumentException("unknown workload " + kind + " (gemm|attention|encoder-layer)");
        };
    }

    static int num(Map<String, String> o, String key, int dflt) {
        return o.containsKey(key) ? Integer.parseInt(o.get(key)) : dflt;
    }

    static double median(double[] a, int n) {
        double[] s = Arrays.copyOf(a, n);
        Arrays.sort(s);
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
