package io.attn.engine;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.backend.DeviceTimer;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.io.Json;
import io.attn.nn.Forward;
import io.attn.nn.Masks;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.nn.TransformerEncoderLayer;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One kernel of an {@link Engine}'s device on random inputs, ready to be timed ({@code attn bench gemm}, {@code attn
 * bench attention}): a GEMM or a scaled dot-product attention as the engine's layers call them, its floating-point
 * operation count and a shape label. {@link #run()} is one call: inputs in, outputs out (so on a GPU it includes the
 * host transfers), unless made {@code resident} (inputs uploaded once; each call downloads only a mean per row) or
 * {@code into} (outputs into arrays allocated once, as NumPy's {@code out=}). {@link #deviceTimer} times the device
 * work of a call where the backend can (CUDA events). Not thread-safe; close it when done.
 */
public final class KernelBench implements AutoCloseable {
    private final Backend backend;
    private final Executor executor;
    private final java.util.function.Supplier<java.util.List<Tensor>> call;
    private final Map<String, Buffer> bound;
    private final double flops;
    private final String shape;
    private DeviceTimer timer;
    private boolean timerAsked;

    private KernelBench(
            Engine engine,
            Graph graph,
            Map<String, Tensor> feeds,
            boolean resident,
            boolean into,
            double flops,
            String shape) {
        this.backend = engine.backend();
        this.executor = new Executor(backend, graph);
        this.flops = flops;
        if (resident) {
            bound = new LinkedHashMap<>();
            for (var e : feeds.entrySet()) {
                float[] d = e.getValue().data();
                Buffer buf = backend.allocate(DType.F32, d.length);
                bound.put(e.getKey(), buf);
                backend.upload(d, d.length, buf);
            }
            this.call = () -> executor.run(Map.of(), bound);
            this.shape = shape + " resident";
        } else if (into) {
            bound = new LinkedHashMap<>();
            float[][] outs = new float[graph.outputs().size()][];
            for (int i = 0; i < outs.length; i++)
                outs[i] = new float[(int) graph.outputs().get(i).shape().size()];
            this.call = () -> executor.runInto(feeds, outs);
            this.shape = shape + " into";
        } else {
            bound = new LinkedHashMap<>();
            this.call = () -> executor.run(feeds);
            this.shape = shape;
        }
    }

    /**
     * Batched SGEMM {@code C = A . B}: A (batch, m, k); B (batch, k, n), or (batch, n, k) used as B^T with {@code
     * transB}; with {@code weights}, B is a layer's weight as in a Linear: a constant (n, k) used as B^T, shared by the
     * batch (the CPU packs it once, on the first call).
     */
    public static KernelBench gemm(
            Engine engine, int batch, int m, int n, int k, boolean transB, boolean weights, boolean into) {
        positive("batch", batch, "m", m, "n", n, "k", k);
        SplittableRandom r = new SplittableRandom(1);
        GraphBuilder g = new GraphBuilder();
        Node a = g.input("a", batch, m, k);
        double flops = 2.0 * batch * m * n * k;
        if (weights) {
            Node w = g.constant("w", random(r, n, k));
            Map<String, Tensor> feeds = Map.of("a", random(r, batch, m, k));
            Node c = g.matmul(a, w, false, true, 1f);
            String shape = String.format("batch=%d m=%d n=%d k=%d weights B^T", batch, m, n, k);
            return new KernelBench(engine, g.build(c), feeds, false, into, flops, shape);
        }
        Node b = transB ? g.input("b", batch, n, k) : g.input("b", batch, k, n);
        Node c = g.matmul(a, b, false, transB, 1f);
        Map<String, Tensor> feeds =
                Map.of("a", random(r, batch, m, k), "b", transB ? random(r, batch, n, k) : random(r, batch, k, n));
        String shape = String.format("batch=%d m=%d n=%d k=%d%s", batch, m, n, k, transB ? " B^T" : "");
        return new KernelBench(engine, g.build(c), feeds, false, into, flops, shape);
    }

    /**
     * Scaled dot-product attention over q (batch, heads, seq, headDim) and k, v (batch, heads, kvSeq, headDim): fused,
     * or with {@code weights} unfused as ScaledDotProductAttention (the (B, H, L, S) weights returned too). The flop
     * count counts the visible score entries only (causal keeps j <= i).
     */
    public static KernelBench attention(
            Engine engine,
            int batch,
            int heads,
            int seq,
            int kvSeq,
            int headDim,
            boolean causal,
            boolean weights,
            boolean resident,
            boolean into) {
        return attention(engine, batch, heads, seq, kvSeq, headDim, causal, -1, weights, resident, into);
    }

    /**
     * {@link #attention(Engine, int, int, int, int, int, boolean, boolean, boolean, boolean)} with a sliding window of
     * {@code window} keys on either side of each query ({@code |i - j| <= window}, ModernBERT's local layers; under
     * causal the left side only); {@code window < 0}: none.
     */
    public static KernelBench attention(
            Engine engine,
            int batch,
            int heads,
            int seq,
            int kvSeq,
            int headDim,
            boolean causal,
            int window,
            boolean weights,
            boolean resident,
            boolean into) {
        positive("batch", batch, "heads", heads, "seq", seq, "head dim", headDim);
        if (resident && into) throw AttnException.badInput("resident and into exclude each other");
        int s = kvSeq > 0 ? kvSeq : seq;
        SplittableRandom r = new SplittableRandom(2);
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", batch, heads, seq, headDim);
        Node k = g.input("k", batch, heads, s, headDim);
        Node v = g.input("v", batch, heads, s, headDim);
        MaskSpec mask = causal ? MaskSpec.CAUSAL : MaskSpec.NONE;
        if (window >= 0) mask = mask.window(window, window);
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
        double pairs = 0;
        for (int i = 0; i < seq; i++) { // the (query, key) pairs computed: those the masks leave
            long hi = Math.min(s - 1L, causal ? i : window >= 0 ? (long) i + window : s - 1L);
            long lo = window >= 0 ? Math.max(0L, (long) i - window) : 0L;
            pairs += Math.max(0L, hi - lo + 1);
        }
        double flops = 4.0 * batch * heads * headDim * pairs;
        String shape = String.format(
                "B=%d H=%d L=%d S=%d D=%d%s%s%s",
                batch,
                heads,
                seq,
                s,
                headDim,
                causal ? " causal" : "",
                window >= 0 ? " window " + window : "",
                weights ? " +weights" : "");
        Graph graph;
        if (resident) {
            Node o = g.mean(out, 3);
            graph = weights ? g.build(o, g.mean(w, 3)) : g.build(o);
        } else graph = weights ? g.build(out, w) : g.build(out);
        return new KernelBench(engine, graph, feeds, resident, into, flops, shape);
    }

    /**
     * {@code nn.TransformerEncoderLayer} (batch_first, dropout 0, {@code activation} relu or gelu, post-norm unless
     * {@code normFirst}) with random weights (SplittableRandom(3), as {@code attn bench encoder-layer} has always made
     * them) on x (batch, seq, dModel); {@code resident}: x uploaded once and kept on the backend, each call downloads
     * only the (batch, seq) mean over the model dimension.
     */
    public static KernelBench encoderLayer(
            Engine engine,
            int batch,
            int seq,
            int dModel,
            int heads,
            int ffn,
            boolean normFirst,
            String activation,
            boolean resident) {
        positive("batch", batch, "seq", seq, "d_model", dModel, "heads", heads, "ffn", ffn);
        SplittableRandom r = new SplittableRandom(3);
        Map<String, Tensor> sd = encoderLayerWeights(r, dModel, ffn);
        Tensor x = random(r, batch, seq, dModel); // after the weights, as attn bench encoder-layer has always drawn it
        ModelConfig c = ModelConfig.parse(
                Json.parseObject(encoderLayerConfig(dModel, heads, ffn, normFirst, activation), "bench"), "bench");
        TransformerEncoderLayer layer = new TransformerEncoderLayer(new StateDict(sd, "bench"), "", c.layer());
        GraphBuilder g = new GraphBuilder();
        Node in = g.input("x", batch, seq, dModel);
        Node out = layer.forward(new Forward(g, AttentionWeights.NONE), in, Masks.NONE);
        Graph graph = resident ? g.build(g.mean(out, 2)) : g.build(out);
        double flops =
                2.0 * batch * seq * (4.0 * dModel * dModel + 2.0 * dModel * ffn) + 4.0 * batch * seq * seq * dModel;
        String shape = String.format(
                Locale.ROOT,
                "B=%d L=%d E=%d H=%d F=%d %s %s",
                batch,
                seq,
                dModel,
                heads,
                ffn,
                normFirst ? "pre-norm" : "post-norm",
                activation);
        return new KernelBench(engine, graph, Map.of("x", x), resident, false, flops, shape);
    }

    /** The module config of {@link #encoderLayer} ({@code attn bench encoder-layer} loads the same). */
    public static String encoderLayerConfig(int dModel, int heads, int ffn, boolean normFirst, String activation) {
        return String.format(
                Locale.ROOT,
                "{\"module\":\"TransformerEncoderLayer\",\"d_model\":%d,\"nhead\":%d,\"dim_feedforward\":%d,"
                        + "\"activation\":\"%s\",\"layer_norm_eps\":1e-5,\"norm_first\":%b,\"batch_first\":true}",
                dModel,
                heads,
                ffn,
                activation,
                normFirst);
    }

    /** The random weights of {@link #encoderLayer}, drawn from {@code r} (then x is drawn from it). */
    public static Map<String, Tensor> encoderLayerWeights(SplittableRandom r, int dModel, int ffn) {
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
            float[] one = new float[dModel];
            Arrays.fill(one, 1f);
            sd.put(n + ".weight", Tensor.of(one, dModel));
            sd.put(n + ".bias", Tensor.zeros(dModel));
        }
        return sd;
    }

    private static Tensor scaled(Tensor t, float s) {
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] *= s;
        return t;
    }

    /**
     * The backend's timer of device work ({@link Backend#deviceTimer}; CUDA events), made on first use and closed with
     * this bench; null where the backend has none.
     */
    private DeviceTimer deviceTimer() {
        if (!timerAsked) {
            timerAsked = true;
            timer = backend.deviceTimer();
        }
        return timer;
    }

    /** Whether the backend times device work ({@link #runTimedOnDevice}): CUDA. */
    public boolean timesDevice() {
        return deviceTimer() != null;
    }

    /**
     * One call timed on the device: the backend's timer (CUDA events on its stream) started before the call and
     * stopped after it; the device time in ms, or NaN where the backend has no timer ({@link #timesDevice}).
     */
    public double runTimedOnDevice() {
        DeviceTimer t = deviceTimer();
        if (t == null) {
            run();
            return Double.NaN;
        }
        t.start();
        call.get();
        return t.stop();
    }

    /** One call of the kernel (see the class comment for what it includes). */
    public void run() {
        call.get();
    }

    /** One call, returning its outputs (resident: the means it downloads), for tests. */
    public java.util.List<Tensor> runOutputs() {
        return call.get();
    }

    /** Floating-point operations of one call. */
    public double flops() {
        return flops;
    }

    /** The shape label, e.g. {@code batch=1 m=1024 n=1024 k=1024 into}. */
    public String shape() {
        return shape;
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.close();
            timer = null;
        }
        for (Buffer b : bound.values()) backend.release(b);
        bound.clear();
        executor.close();
    }

    /** A tensor of {@code dims} uniform in [-1, 1) from {@code r}. */
    public static Tensor random(SplittableRandom r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) (2 * r.nextDouble() - 1);
        return t;
    }

    private static void positive(Object... nameValue) {
        for (int i = 0; i < nameValue.length; i += 2)
            if ((int) nameValue[i + 1] <= 0)
                throw AttnException.badInput(nameValue[i] + " must be positive, got " + nameValue[i + 1]);
    }
}
