package io.attn.benchmarks;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.cpu.CpuBackend;
import io.attn.engine.Request;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.nn.LayerConfig;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.nio.FloatBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One benchmark shape, run by attn's CPU backend and by ONNX Runtime on the same data: {@link #ours()} and
 * {@link #ort()} each do one full inference call (inputs in, a fresh output out); {@link #maxAbsDiff()} compares the
 * two outputs so the timings are known to be of the same math.
 *
 * <p>Layouts: attn's ATTENTION op takes {@code (B, H, L, D)}; ORT's {@code com.microsoft.MultiHeadAttention} takes
 * {@code (B, L, H*D)}. Each gets the same numbers in its own layout (prepared once, outside the timing); the
 * outputs are compared after transposing ours.
 */
abstract class Workload implements AutoCloseable {
    final String name, shape;
    final double flops;
    final int threads;
    final Backend backend;
    private final Backend cpu;
    final OrtEnvironment env = OrtEnvironment.getEnvironment();
    OrtSession session;
    final Map<String, OnnxTensor> ortFeeds = new LinkedHashMap<>();

    Workload(String name, String shape, double flops, int threads) {
        this.name = name;
        this.shape = shape;
        this.flops = flops;
        this.threads = threads;
        this.cpu = new CpuBackend(BackendOptions.defaults().withThreads(threads));
        this.backend = Boolean.getBoolean("attn.profile") ? new Profile.Timed(cpu) : cpu;
    }

    /** One attn call; returns the output. */
    abstract float[] ours();

    /** One ONNX Runtime call; returns the output in ORT's layout. */
    final float[] ort() {
        try (OrtSession.Result r = session.run(ortFeeds)) {
            FloatBuffer fb = ((OnnxTensor) r.get(0)).getFloatBuffer();
            float[] o = new float[fb.remaining()];
            fb.get(o);
            return o;
        } catch (OrtException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Our output in ORT's layout. */
    float[] oursInOrtLayout() {
        return ours();
    }

    /** Largest |ours - ort| over the output. */
    double maxAbsDiff() {
        float[] a = oursInOrtLayout(), b = ort();
        if (a.length != b.length)
            throw new IllegalStateException("output sizes differ: " + a.length + " vs " + b.length);
        double m = 0;
        for (int i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
        return m;
    }

    void openSession(Onnx model) {
        try {
            OrtSession.SessionOptions o = new OrtSession.SessionOptions();
            o.setIntraOpNumThreads(threads);
            o.setInterOpNumThreads(1);
            // ORT's pool threads spin after each run by default; interleaved with attn calls on a 2-core machine they
            // take a core from attn for its whole run (measured: attn 2 threads 26.6 ms interleaved vs 13.8 ms alone).
            // Off unless -Dort.spin=true: then each engine gets the cores while it runs.
            if (threads > 1 && !Boolean.getBoolean("ort.spin"))
                o.addConfigEntry("session.intra_op.allow_spinning", "0");
            o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            session = env.createSession(model.toBytes(), o);
        } catch (OrtException e) {
            throw new IllegalStateException(e);
        }
    }

    void feed(String name, float[] data, long... dims) {
        try {
            FloatBuffer fb = java.nio.ByteBuffer.allocateDirect(4 * data.length)
                    .order(java.nio.ByteOrder.nativeOrder())
                    .asFloatBuffer();
            fb.put(data).flip();
            ortFeeds.put(name, OnnxTensor.createTensor(env, fb, dims));
        } catch (OrtException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        try {
            for (OnnxTensor t : ortFeeds.values()) t.close();
            if (session != null) session.close();
        } catch (OrtException e) {
            throw new IllegalStateException(e);
        }
        cpu.close();
    }

    static float[] random(SplittableRandom r, int n, float scale) {
        float[] d = new float[n];
        for (int i = 0; i < n; i++) d[i] = (float) ((2 * r.nextDouble() - 1) * scale);
        return d;
    }

    /** {@code (B, X, Y, D) -> (B, Y, X, D)}: swaps the two middle axes. */
    static float[] swap12(float[] a, int b, int x, int y, int d) {
        float[] o = new float[a.length];
        for (int i = 0; i < b; i++)
            for (int j = 0; j < x; j++)
                for (int k = 0; k < y; k++)
                    System.arraycopy(a, ((i * x + j) * y + k) * d, o, ((i * y + k) * x + j) * d, d);
        return o;
    }

    /** {@code W (out, in) -> W^T (in, out)}, the ONNX MatMul weight of a PyTorch Linear. */
    static float[] transpose(float[] w, int rows, int cols) {
        float[] t = new float[w.length];
        for (int i = 0; i < rows; i++) for (int j = 0; j < cols; j++) t[j * rows + i] = w[i * cols + j];
        return t;
    }

    /** Batched GEMM {@code C = A . B} (or {@code A . B^T}); ORT runs MatMul on the same arrays. */
    static final class Gemm extends Workload {
        private final Executor ex;
        private final Map<String, Tensor> feeds;

        Gemm(int batch, int m, int n, int k, boolean transB, int threads) {
            super(
                    "gemm",
                    String.format("batch=%d m=%d n=%d k=%d%s", batch, m, n, k, transB ? " B^T" : ""),
                    2.0 * batch * m * n * k,
                    threads);
            SplittableRandom r = new SplittableRandom(1);
            float[] a = random(r, batch * m * k, 1), b = random(r, batch * k * n, 1);
            GraphBuilder g = new GraphBuilder();
            Node na = g.input("a", batch, m, k);
            Node nb = transB ? g.input("b", batch, n, k) : g.input("b", batch, k, n);
            ex = new Executor(backend, g.build(g.matmul(na, nb, false, transB, 1f)));
            feeds = Map.of(
                    "a",
                    Tensor.of(a, batch, m, k),
                    "b",
                    transB ? Tensor.of(b, batch, n, k) : Tensor.of(b, batch, k, n));
            Onnx o = new Onnx().input("a", batch, m, k).output("c", batch, m, n);
            if (transB) {
                o.input("b", batch, n, k)
                        .node("Transpose", new String[] {"b"}, new String[] {"bt"}, "perm", new int[] {0, 2, 1});
                o.node("MatMul", new String[] {"a", "bt"}, new String[] {"c"});
            } else o.input("b", batch, k, n).node("MatMul", new String[] {"a", "b"}, new String[] {"c"});
            openSession(o);
            feed("a", a, batch, m, k);
            feed("b", b, transB ? new long[] {batch, n, k} : new long[] {batch, k, n});
        }

        @Override
        float[] ours() {
            return ex.run(feeds).get(0).data();
        }

        @Override
        public void close() {
            ex.close();
            super.close();
        }
    }

    /** Fused attention, attn's ATTENTION op vs ORT's com.microsoft.MultiHeadAttention. */
    static final class Attention extends Workload {
        private final Executor ex;
        private final Map<String, Tensor> feeds;
        private final int b, h, l, d;

        Attention(int b, int h, int l, int s, int d, boolean causal, int threads) {
            super(
                    "attention",
                    String.format("B=%d H=%d L=%d S=%d D=%d%s", b, h, l, s, d, causal ? " causal" : ""),
                    4.0 * b * h * d * pairs(l, s, causal),
                    threads);
            this.b = b;
            this.h = h;
            this.l = l;
            this.d = d;
            SplittableRandom r = new SplittableRandom(2);
            float[] q = random(r, b * h * l * d, 1), k = random(r, b * h * s * d, 1), v = random(r, b * h * s * d, 1);
            GraphBuilder g = new GraphBuilder();
            Node nq = g.input("q", b, h, l, d), nk = g.input("k", b, h, s, d), nv = g.input("v", b, h, s, d);
            float scale = (float) (1 / Math.sqrt(d));
            ex = new Executor(
                    backend,
                    g.build(g.attention(nq, nk, nv, scale, causal ? MaskSpec.CAUSAL : MaskSpec.NONE, null, null)));
            feeds = Map.of("q", Tensor.of(q, b, h, l, d), "k", Tensor.of(k, b, h, s, d), "v", Tensor.of(v, b, h, s, d));
            Onnx o = new Onnx()
                    .input("q", b, l, h * d)
                    .input("k", b, s, h * d)
                    .input("v", b, s, h * d)
                    .output("o", b, l, h * d)
                    .node(
                            "com.microsoft:MultiHeadAttention",
                            new String[] {"q", "k", "v"},
                            new String[] {"o"},
                            "num_heads",
                            h,
                            "scale",
                            scale,
                            "unidirectional",
                            causal ? 1 : 0);
            openSession(o);
            feed("q", swap12(q, b, h, l, d), b, l, h * d);
            feed("k", swap12(k, b, h, s, d), b, s, h * d);
            feed("v", swap12(v, b, h, s, d), b, s, h * d);
        }

        static double pairs(int l, int s, boolean causal) {
            double p = 0;
            for (int i = 0; i < l; i++) p += causal ? Math.min(i + 1, s) : s;
            return p;
        }

        @Override
        float[] ours() {
            return ex.run(feeds).get(0).data();
        }

        @Override
        float[] oursInOrtLayout() {
            return swap12(ours(), b, h, l, d);
        }

        @Override
        public void close() {
            ex.close();
            super.close();
        }
    }

    /**
     * nn.TransformerEncoderLayer (post-norm, relu): attn's Model vs an ONNX graph of MatMul/Add, MultiHeadAttention,
     * LayerNormalization (opset 17) and Relu with the same weights.
     */
    static final class EncoderLayer extends Workload {
        private final Model model;
        private final Request in;

        EncoderLayer(int batch, int seq, int e, int heads, int ffn, int threads) {
            super(
                    "encoder-layer",
                    String.format("B=%d L=%d E=%d H=%d F=%d post-norm relu", batch, seq, e, heads, ffn),
                    2.0 * batch * seq * (4.0 * e * e + 2.0 * e * ffn) + 4.0 * batch * seq * seq * e,
                    threads);
            SplittableRandom r = new SplittableRandom(3);
            float a = (float) (1 / Math.sqrt(e));
            float[] wIn = random(r, 3 * e * e, a), bIn = random(r, 3 * e, 0.1f);
            float[] wo = random(r, e * e, a), bo = random(r, e, 0.1f);
            float[] w1 = random(r, ffn * e, a), b1 = random(r, ffn, 0.1f);
            float[] w2 = random(r, e * ffn, (float) (1 / Math.sqrt(ffn))), b2 = random(r, e, 0.1f);
            float[] g1 = random(r, e, 0.1f),
                    be1 = random(r, e, 0.1f),
                    g2 = random(r, e, 0.1f),
                    be2 = random(r, e, 0.1f);
            for (int i = 0; i < e; i++) {
                g1[i] += 1;
                g2[i] += 1;
            }
            float[] x = random(r, batch * seq * e, 1);
            Map<String, Tensor> sd = new LinkedHashMap<>();
            sd.put("self_attn.in_proj_weight", Tensor.of(wIn, 3 * e, e));
            sd.put("self_attn.in_proj_bias", Tensor.of(bIn, 3 * e));
            sd.put("self_attn.out_proj.weight", Tensor.of(wo, e, e));
            sd.put("self_attn.out_proj.bias", Tensor.of(bo, e));
            sd.put("linear1.weight", Tensor.of(w1, ffn, e));
            sd.put("linear1.bias", Tensor.of(b1, ffn));
            sd.put("linear2.weight", Tensor.of(w2, e, ffn));
            sd.put("linear2.bias", Tensor.of(b2, e));
            sd.put("norm1.weight", Tensor.of(g1, e));
            sd.put("norm1.bias", Tensor.of(be1, e));
            sd.put("norm2.weight", Tensor.of(g2, e));
            sd.put("norm2.bias", Tensor.of(be2, e));
            LayerConfig lc = new LayerConfig(e, heads, ffn, "relu", 1e-5f, false, true);
            ModelConfig mc = new ModelConfig(ModelConfig.Kind.TransformerEncoderLayer, lc, 0, 0, true, 0, false, 0, 0);
            model = Model.load(mc, new StateDict(sd, "bench"));
            in = Request.of(Tensor.of(x, batch, seq, e));

            Onnx o = new Onnx().input("x", batch, seq, e).output("y", batch, seq, e);
            String[] qkv = {"q", "k", "v"};
            for (int p = 0; p < 3; p++) {
                float[] wp = java.util.Arrays.copyOfRange(wIn, p * e * e, (p + 1) * e * e);
                o.initializer("w" + qkv[p], transpose(wp, e, e), e, e);
                o.initializer("b" + qkv[p], java.util.Arrays.copyOfRange(bIn, p * e, (p + 1) * e), e);
                o.node("MatMul", new String[] {"x", "w" + qkv[p]}, new String[] {qkv[p] + "0"});
                o.node("Add", new String[] {qkv[p] + "0", "b" + qkv[p]}, new String[] {qkv[p]});
            }
            o.node("com.microsoft:MultiHeadAttention", qkv, new String[] {"att"}, "num_heads", heads);
            linear(o, "att", "proj", wo, bo, e, e);
            o.node("Add", new String[] {"x", "proj"}, new String[] {"r1"});
            norm(o, "r1", "h1", "1", g1, be1, e);
            linear(o, "h1", "f1", w1, b1, ffn, e);
            o.node("Relu", new String[] {"f1"}, new String[] {"f1r"});
            linear(o, "f1r", "f2", w2, b2, e, ffn);
            o.node("Add", new String[] {"h1", "f2"}, new String[] {"r2"});
            norm(o, "r2", "y", "2", g2, be2, e);
            openSession(o);
            feed("x", x, batch, seq, e);
        }

        private static void linear(Onnx o, String x, String y, float[] w, float[] bias, int out, int in) {
            o.initializer(y + "_w", transpose(w, out, in), in, out).initializer(y + "_b", bias, out);
            o.node("MatMul", new String[] {x, y + "_w"}, new String[] {y + "_mm"});
            o.node("Add", new String[] {y + "_mm", y + "_b"}, new String[] {y});
        }

        private static void norm(Onnx o, String x, String y, String tag, float[] g, float[] b, int e) {
            o.initializer("g" + tag, g, e).initializer("be" + tag, b, e);
            o.node(
                    "LayerNormalization",
                    new String[] {x, "g" + tag, "be" + tag},
                    new String[] {y},
                    "axis",
                    -1,
                    "epsilon",
                    1e-5f);
        }

        @Override
        float[] ours() {
            return io.attn.engine.internal.ModuleCalls.run(model, backend, in)
                    .output()
                    .data();
        }

        @Override
        public void close() {
            model.close();
            super.close();
        }
    }
}
