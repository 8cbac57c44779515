package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.Node;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * {@code torch.nn.Linear}: {@code y = x W^T + b}, weight {@code (out, in)}, bias {@code (out)} or absent. State:
 * {@code weight}, {@code bias}.
 *
 * <p>Or dynamically quantized ({@code quant} non-null, ONNX Runtime's {@code quantize_dynamic}): the weight int8 {@code
 * (in, out)} (MatMulInteger's layout, {@link io.attn.graph.Op#QMATMUL}) with {@code weight_scale} and {@code
 * weight_zero_point} (one value or one per output), the activations quantized per call, per sequence.
 *
 * <p>Or with a low-rank adapter run beside a float weight ({@code lora} non-null: {@code y = x W^T + b + (x A^T) B^T},
 * a task adapter kept apart from weights that several tasks' models share, {@code TaskAdapters.Mode.SHARE}),
 * loaded from {@code <layer>.lora_A} {@code (r, in)} and {@code <layer>.lora_B} {@code (out, r)} beside {@code
 * <layer>.weight}, LoRA's scaling already in B.
 */
public record Linear(String name, Tensor weight, Tensor bias, Quant quant, Lora lora) {
    /** A quantized weight's scale and zero point: one value, or one per output. */
    public record Quant(float[] scale, byte[] zeroPoint) {}

    /** A low-rank adapter: A {@code (r, in)}, B {@code (out, r)} (scaled), added as {@code (x A^T) B^T}. */
    public record Lora(Tensor a, Tensor b) {}

    /** Suffixes of a layer's adapter tensors, beside {@code <layer>.weight}. */
    public static final String LORA_A = ".lora_A", LORA_B = ".lora_B";

    public Linear(String name, Tensor weight, Tensor bias) {
        this(name, weight, bias, null, null);
    }

    public Linear(String name, Tensor weight, Tensor bias, Quant quant) {
        this(name, weight, bias, quant, null);
    }

    public static Linear load(StateDict sd, String prefix, int in, int out, boolean bias) {
        String name = prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
        return load(sd, name, prefix + "weight", prefix + "bias", in, out, bias);
    }

    /**
     * A layer whose weight and bias have names of their own ({@code nn.MultiheadAttention}'s {@code in_proj_weight}
     * and {@code in_proj_bias}): float {@code (out, in)}, or int8 {@code (in, out)} with {@code <weight>_scale} and
     * {@code <weight>_zero_point} beside it.
     */
    static Linear load(StateDict sd, String name, String weight, String biasName, int in, int out, boolean bias) {
        String layer = weight.endsWith(".weight") ? weight.substring(0, weight.length() - ".weight".length()) : null;
        boolean adapted = layer != null && (sd.has(layer + LORA_A) || sd.has(layer + LORA_B));
        if (sd.has(weight + "_scale")) {
            if (adapted)
                throw AttnException.shape(sd.source() + ": " + layer + " has a LoRA adapter beside an int8 weight"
                        + " (adapters run beside float weights only)");
            return loadQuantized(sd, weight, biasName, name, in, out, bias);
        }
        Tensor w = sd.take(weight, out, in), b = sd.takeIf(bias, biasName, out);
        return new Linear(name, w, b, null, adapted ? lora(sd, layer, in, out) : null);
    }

    /** {@code layer}'s adapter: {@code lora_A (r, in)} and {@code lora_B (out, r)}, both present, r alike. */
    static Lora lora(StateDict sd, String layer, int in, int out) {
        if (!sd.has(layer + LORA_A) || !sd.has(layer + LORA_B))
            throw AttnException.shape(sd.source() + ": " + layer + (sd.has(layer + LORA_A) ? LORA_A : LORA_B)
                    + " has no " + layer + (sd.has(layer + LORA_A) ? LORA_B : LORA_A) + " beside it");
        Tensor a = sd.takeAny(layer + LORA_A);
        int r = a.rank() == 2 ? a.dim(0) : -1;
        if (r <= 0 || a.dim(1) != in || a.dtype() != DType.F32)
            throw AttnException.shape(sd.source() + ": tensor '" + layer + LORA_A + "' is " + a.dtype() + a.shape()
                    + ", expected float (r, " + in + ")");
        return new Lora(a, sd.take(layer + LORA_B, out, r));
    }

    private static Linear loadQuantized(
            StateDict sd, String weight, String biasName, String name, int in, int out, boolean bias) {
        Tensor w = sd.takeInt8(weight, in, out);
        Tensor scale = sd.takeAny(weight + "_scale");
        Tensor zero = sd.takeAny(weight + "_zero_point");
        if (scale.dtype() != DType.F32 || (scale.size() != 1 && scale.size() != out))
            throw AttnException.shape(sd.source() + ": " + weight + "_scale is " + scale.dtype() + scale.shape()
                    + ", expected float (1) or (" + out + ")");
        for (float v : scale.data())
            if (!(v > 0) || !Float.isFinite(v))
                throw AttnException.shape(sd.source() + ": " + weight + "_scale holds " + v + ", not a positive float");
        if (zero.dtype() != DType.I8 || (zero.size() != 1 && zero.size() != out))
            throw AttnException.shape(sd.source() + ": " + weight + "_zero_point is " + zero.dtype() + zero.shape()
                    + ", expected int8 (1) or (" + out + ")");
        return new Linear(name, w, sd.takeIf(bias, biasName, out), new Quant(scale.data(), zero.int8()));
    }

    /**
     * The outputs {@code [from, to)} of this layer as a layer of its own (a fused QKV projection split into query, key
     * and value): float weight rows, or int8 weight columns with their scales and zero points (copied).
     */
    public Linear outputs(String name, int from, int to) {
        if (quant == null)
            return new Linear(
                    name,
                    rows(weight, from, to),
                    bias == null ? null : rows(bias, from, to),
                    null,
                    lora == null ? null : new Lora(lora.a, lora.b.slice0(from, to)));
        Tensor b = bias == null ? null : bias.slice0(from, to);
        int in = weight.dim(0), out = weight.dim(1), n = to - from;
        byte[] w = weight.int8(), q = new byte[in * n];
        for (int r = 0; r < in; r++) System.arraycopy(w, r * out + from, q, r * n, n);
        boolean one = quant.scale().length == 1;
        return new Linear(
                name,
                Tensor.ofInt8(q, in, n),
                b,
                new Quant(
                        one ? quant.scale() : java.util.Arrays.copyOfRange(quant.scale(), from, to),
                        one ? quant.zeroPoint() : java.util.Arrays.copyOfRange(quant.zeroPoint(), from, to)));
    }

    /**
     * The layer whose outputs are {@code a}'s then {@code b}'s (a gated feed-forward's [gate; up]): float weight rows,
     * or int8 weight columns with one scale and zero point per output unless both layers share one (copied).
     */
    public static Linear concat(String name, Linear a, Linear b) {
        Tensor bias = a.bias == null ? null : cat(a.bias, b.bias);
        if (a.lora != null || b.lora != null)
            throw AttnException.shape(a.name + " and " + b.name + ": layers with a LoRA adapter are not joined (the"
                    + " families with task adapters have no separate gate and up projections)");
        if ((a.quant == null) != (b.quant == null))
            throw AttnException.shape(a.name + " and " + b.name + ": one is int8 and the other float");
        if (a.quant == null) return new Linear(name, cat(a.weight, b.weight), bias);
        int in = a.weight.dim(0), na = a.weight.dim(1), nb = b.weight.dim(1), n = na + nb;
        byte[] q = new byte[in * n];
        for (int r = 0; r < in; r++) {
            System.arraycopy(a.weight.int8(), r * na, q, r * n, na);
            System.arraycopy(b.weight.int8(), r * nb, q, r * n + na, nb);
        }
        Quant qa = a.quant, qb = b.quant;
        boolean shared = qa.scale().length == 1
                && qb.scale().length == 1
                && qa.scale()[0] == qb.scale()[0]
                && qa.zeroPoint()[0] == qb.zeroPoint()[0];
        Quant quant = shared
                ? qa
                : new Quant(
                        catFloats(perOutput(qa.scale(), na), perOutput(qb.scale(), nb)),
                        catBytes(perOutput(qa.zeroPoint(), na), perOutput(qb.zeroPoint(), nb)));
        return new Linear(name, Tensor.ofInt8(q, in, n), bias, quant);
    }

    private static Tensor cat(Tensor a, Tensor b) {
        float[] d = java.util.Arrays.copyOf(a.data(), a.size() + b.size());
        System.arraycopy(b.data(), 0, d, a.size(), b.size());
        return Tensor.of(a.shape().with(0, a.dim(0) + b.dim(0)), d);
    }

    private static float[] perOutput(float[] v, int n) {
        if (v.length == n) return v;
        float[] o = new float[n];
        java.util.Arrays.fill(o, v[0]);
        return o;
    }

    private static byte[] perOutput(byte[] v, int n) {
        if (v.length == n) return v;
        byte[] o = new byte[n];
        java.util.Arrays.fill(o, v[0]);
        return o;
    }

    private static float[] catFloats(float[] a, float[] b) {
        float[] o = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, o, a.length, b.length);
        return o;
    }

    private static byte[] catBytes(byte[] a, byte[] b) {
        byte[] o = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, o, a.length, b.length);
        return o;
    }

    // a fused weight's row ranges, found again by the fused tensor's identity: the models of several tasks built over
    // the same shared weights (TaskAdapters.Mode.SHARE) split it into the same arrays (packed once by the backends)
    private static final Map<Tensor, Map<Long, Tensor>> SLICES = new WeakHashMap<>();

    private static Tensor rows(Tensor t, int from, int to) {
        synchronized (SLICES) {
            return SLICES.computeIfAbsent(t, x -> new HashMap<>())
                    .computeIfAbsent(((long) from << 32) | to, x -> t.slice0(from, to));
        }
    }

    /** Input features. */
    public int in() {
        return quant != null ? weight.dim(0) : weight.dim(1);
    }

    public Node forward(Forward f, Node x) {
        return forward(f, x, false);
    }

    /** The layer with its output split into {@code heads} heads, {@code (B, heads, L, out / heads)}. */
    public Node forwardHeads(Forward f, Node x, int heads) {
        return f.g.splitHeads(forward(f, x), heads);
    }

    /** The layer, then ReLU if {@code relu}. */
    public Node forward(Forward f, Node x, boolean relu) {
        Node b = bias == null ? null : f.g.constant(name + ".bias", bias);
        if (quant != null) {
            Node y = f.g.qmatmul(x, weight, quant.scale(), quant.zeroPoint(), f.rowGroups(x), f.paddingOf(x));
            if (b != null) y = f.g.addBias(y, b);
            return relu ? f.g.relu(y) : y;
        }
        Node w = f.g.constant(name + ".weight", weight);
        if (lora == null) return f.g.linear(x, w, b, relu);
        // the low-rank product first, so that a backend can add it to the product in its epilogue, as a residual
        Node low = f.lowRank
                .computeIfAbsent(x, any -> new java.util.IdentityHashMap<>())
                .computeIfAbsent(lora.a, a -> f.g.linear(x, f.g.constant(name + LORA_A, a), null, false));
        low = f.g.linear(low, f.g.constant(name + LORA_B, lora.b), null, false);
        Node y = f.g.add(f.g.linear(x, w, b, false), low);
        return relu ? f.g.relu(y) : y;
    }
}
