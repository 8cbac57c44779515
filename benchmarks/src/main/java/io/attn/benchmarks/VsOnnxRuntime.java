package io.attn.benchmarks;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH: attn vs ONNX Runtime on identical shapes and data ({@link Workload}). Run on demand only:
 * {@code java --add-modules jdk.incubator.vector -jar benchmarks/target/benchmarks.jar VsOnnxRuntime -p threads=1}.
 * JMH runs the two methods one after the other; {@link Compare} interleaves them for same-load ratios.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-XX:+UseParallelGC"})
public class VsOnnxRuntime {
    /**
     * gemm1024, gemm2048, qk (64 x 512x64 . 64x512), pv (64 x 512x512 . 512x64), attention (B8 H8 L512 D64), causal,
     * encoder (d512 h8 ffn2048, B8 L512); the small shapes of sentence encoders (MiniLM: hidden 384, 12 heads of 32,
     * FFN 1536): attention-small (B32 H12 L64 D32), encoder-small (B32 L64), ffn1 (512 x 384 . 384 x 1536) and ffn2
     * (2048 x 1536 . 1536 x 384).
     */
    @Param({
        "attention",
        "encoder",
        "gemm1024",
        "gemm2048",
        "qk",
        "pv",
        "attention-small",
        "encoder-small",
        "ffn1",
        "ffn2"
    })
    public String workload;

    @Param({"1", "2"})
    public int threads;

    private Workload w;

    @Setup(Level.Trial)
    public void setup() {
        Map<String, String> o = new HashMap<>();
        String kind =
                switch (workload) {
                    case "gemm1024" -> "gemm";
                    case "gemm2048" -> {
                        o.put("m", "2048");
                        o.put("n", "2048");
                        o.put("k", "2048");
                        yield "gemm";
                    }
                    case "qk" -> {
                        o.putAll(Map.of("batch", "64", "m", "512", "n", "512", "k", "64", "trans-b", "true"));
                        yield "gemm";
                    }
                    case "pv" -> {
                        o.putAll(Map.of("batch", "64", "m", "512", "n", "64", "k", "512"));
                        yield "gemm";
                    }
                    case "causal" -> {
                        o.put("causal", "true");
                        yield "attention";
                    }
                    case "encoder" -> "encoder-layer";
                    case "attention-small" -> {
                        o.putAll(Map.of("batch", "32", "heads", "12", "seq", "64", "head-dim", "32"));
                        yield "attention";
                    }
                    case "encoder-small" -> {
                        o.putAll(Map.of("batch", "32", "seq", "64", "d-model", "384", "heads", "12", "ffn", "1536"));
                        yield "encoder-layer";
                    }
                    case "ffn1" -> {
                        o.putAll(Map.of("m", "512", "n", "1536", "k", "384"));
                        yield "gemm";
                    }
                    case "ffn2" -> {
                        o.putAll(Map.of("m", "2048", "n", "384", "k", "1536"));
                        yield "gemm";
                    }
                    default -> workload;
                };
        w = Compare.create(kind, o, threads);
        // JMH shows a fork's output: every result comes with the CPU it ran on
        System.out.println("cpu: " + io.attn.cpu.CpuInfo.host().describe() + "; kernels: "
                + io.attn.cpu.CpuInfo.kernels() + "; ONNX Runtime "
                + ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion() + "; " + w.name + " " + w.shape);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        w.close();
    }

    @Benchmark
    public float[] attn() {
        return w.ours();
    }

    @Benchmark
    public float[] ort() {
        return w.ort();
    }
}
