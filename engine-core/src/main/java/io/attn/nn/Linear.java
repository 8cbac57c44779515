package io.attn.nn;

import io.attn.graph.Node;
import io.attn.tensor.Tensor;

/**
 * {@code torch.nn.Linear}: {@code y = x W^T + b}, weight {@code (out, in)}, bias {@code (out)} or absent. State:
 * {@code weight}, {@code bias}.
 */
public record Linear(String name, Tensor weight, Tensor bias) {
    public static Linear load(StateDict sd, String prefix, int in, int out, boolean bias) {
        return new Linear(
                prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix,
                sd.take(prefix + "weight", out, in),
                sd.takeIf(bias, prefix + "bias", out));
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
        Node w = f.g.constant(name + ".weight", weight);
        Node b = bias == null ? null : f.g.constant(name + ".bias", bias);
        return f.g.linear(x, w, b, relu);
    }
}
