package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.Node;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;

/**
 * {@code torch.nn.Linear}: {@code y = x W^T + b}, weight {@code (out, in)}, bias {@code (out)} or absent. State:
 * {@code weight}, {@code bias}.
 *
 * <p>Or dynamically quantized ({@code quant} non-null, ONNX Runtime's {@code quantize_dynamic}): the weight int8 {@code
 * (in, out)} (MatMulInteger's layout, {@link io.attn.graph.Op#QMATMUL}) with {@code weight_scale} and {@code
 * weight_zero_point} (one value or one per output), the activations quantized per call, per sequence.
 */
public record Linear(String name, Tensor weight, Tensor bias, Quant quant) {
    /** A quantized weight's scale and zero point: one value, or one per output. */
    public record Quant(float[] scale, byte[] zeroPoint) {}

    public Linear(String name, Tensor weight, Tensor bias) {
        this(name, weight, bias, null);
    }

    public static Linear load(StateDict sd, String prefix, int in, int out, boolean bias) {
        String name = prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
        if (sd.has(prefix + "weight_scale")) return loadQuantized(sd, prefix, name, in, out, bias);
        return new Linear(name, sd.take(prefix + "weight", out, in), sd.takeIf(bias, prefix + "bias", out));
    }

    private static Linear loadQuantized(StateDict sd, String prefix, String name, int in, int out, boolean bias) {
        Tensor w = sd.takeInt8(prefix + "weight", in, out);
        Tensor scale = sd.takeAny(prefix + "weight_scale");
        Tensor zero = sd.takeAny(prefix + "weight_zero_point");
        if (scale.dtype() != DType.F32 || (scale.size() != 1 && scale.size() != out))
            throw AttnException.shape(sd.source() + ": " + prefix + "weight_scale is " + scale.dtype() + scale.shape()
                    + ", expected float (1) or (" + out + ")");
        for (float v : scale.data())
            if (!(v > 0) || !Float.isFinite(v))
                throw AttnException.shape(
                        sd.source() + ": " + prefix + "weight_scale holds " + v + ", not a positive float");
        if (zero.dtype() != DType.I8 || (zero.size() != 1 && zero.size() != out))
            throw AttnException.shape(sd.source() + ": " + prefix + "weight_zero_point is " + zero.dtype()
                    + zero.shape() + ", expected int8 (1) or (" + out + ")");
        return new Linear(name, w, sd.takeIf(bias, prefix + "bias", out), new Quant(scale.data(), zero.int8()));
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
            Node y = f.g.qmatmul(x, weight, quant.scale(), quant.zeroPoint(), f.rowGroups(x));
            if (b != null) y = f.g.addBias(y, b);
            return relu ? f.g.relu(y) : y;
        }
        Node w = f.g.constant(name + ".weight", weight);
        return f.g.linear(x, w, b, relu);
    }
}
