package io.attn.nn;

import io.attn.graph.Node;
import io.attn.tensor.Tensor;

/**
 * transformers' {@code LlamaRMSNorm} / {@code Qwen2RMSNorm} / {@code Qwen3RMSNorm} over the last dimension: {@code x /
 * sqrt(mean(x^2) + eps) * weight}. State: {@code weight}.
 */
public record RmsNorm(String name, Tensor weight, float eps) implements Norm {
    public static RmsNorm load(StateDict sd, String prefix, int dim, float eps) {
        return new RmsNorm(prefix.substring(0, prefix.length() - 1), sd.take(prefix + "weight", dim), eps);
    }

    @Override
    public Node forward(Forward f, Node x) {
        return f.g.rmsNorm(x, f.g.constant(name + ".weight", weight), eps);
    }
}
