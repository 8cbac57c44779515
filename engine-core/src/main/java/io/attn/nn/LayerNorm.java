package io.attn.nn;

import io.attn.graph.Node;
import io.attn.tensor.Tensor;

/** {@code torch.nn.LayerNorm(E, eps, bias)} over the last dimension. State: {@code weight}, {@code bias}. */
public record LayerNorm(String name, Tensor weight, Tensor bias, float eps) implements Norm {
    public static LayerNorm load(StateDict sd, String prefix, int dim, float eps, boolean bias) {
        return new LayerNorm(
                prefix.substring(0, prefix.length() - 1),
                sd.take(prefix + "weight", dim),
                sd.takeIf(bias, prefix + "bias", dim),
                eps);
    }

    @Override
    public Node forward(Forward f, Node x) {
        Node w = f.g.constant(name + ".weight", weight);
        Node b = bias == null ? null : f.g.constant(name + ".bias", bias);
        return f.g.layerNorm(x, w, b, eps);
    }
}
