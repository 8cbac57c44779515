package io.attn.nn;

import io.attn.AttnException;
import java.util.Map;

/**
 * The constructor arguments shared by {@code nn.TransformerEncoderLayer} and {@code nn.TransformerDecoderLayer}
 * (dropout is irrelevant at inference; {@code batch_first} is the model's layout, {@link ModelConfig#batchFirst}: the
 * layers themselves always work batch-first).
 *
 * @param activation {@code "relu"} or {@code "gelu"} (exact, erf form, as {@code F.gelu})
 */
public record LayerConfig(
        int dModel,
        int nhead,
        int dimFeedforward,
        String activation,
        float layerNormEps,
        boolean normFirst,
        boolean bias) {
    public LayerConfig {
        if (dModel <= 0) throw AttnException.badInput("d_model must be positive, got " + dModel);
        if (nhead <= 0 || dModel % nhead != 0)
            throw AttnException.badInput("d_model " + dModel + " is not divisible by nhead " + nhead);
        if (dimFeedforward <= 0)
            throw AttnException.badInput("dim_feedforward must be positive, got " + dimFeedforward);
        if (!activation.equals("relu") && !activation.equals("gelu"))
            throw AttnException.badInput("activation must be \"relu\" or \"gelu\", got \"" + activation + "\"");
        if (!(layerNormEps > 0)) throw AttnException.badInput("layer_norm_eps must be positive, got " + layerNormEps);
    }

    /** The arguments under PyTorch's names, in {@code map} order. */
    void putArguments(Map<String, Object> map) {
        map.put("d_model", dModel);
        map.put("nhead", nhead);
        map.put("dim_feedforward", dimFeedforward);
        map.put("activation", activation);
        map.put("layer_norm_eps", Double.parseDouble(Float.toString(layerNormEps))); // 1e-5, not 9.99999974e-6
        map.put("norm_first", normFirst);
        map.put("bias", bias);
    }

    /** PyTorch's defaults: dim_feedforward 2048, relu, eps 1e-5, post-norm, bias. */
    public static LayerConfig of(int dModel, int nhead) {
        return new LayerConfig(dModel, nhead, 2048, "relu", 1e-5f, false, true);
    }
}
