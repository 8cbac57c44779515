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

    /**
     * Gemma's RMSNorm ({@code Gemma3RMSNorm}), which scales by {@code 1 + weight}: loaded as an RMSNorm of weight {@code
     * 1 + weight}, added in float32 as transformers adds it.
     */
    public static RmsNorm loadOffset(StateDict sd, String prefix, int dim, float eps) {
        float[] w = sd.take(prefix + "weight", dim).data(), one = new float[dim];
        for (int i = 0; i < dim; i++) one[i] = 1.0f + w[i];
        return new RmsNorm(prefix.substring(0, prefix.length() - 1), Tensor.of(one, dim), eps);
    }

    @Override
    public Node forward(Forward f, Node x) {
        return f.g.rmsNorm(x, f.g.constant(name + ".weight", weight), eps);
    }
}
