package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.ArrayList;
import java.util.List;

/**
 * ModernBERT ({@code model_type} {@code modernbert}, transformers' {@code ModernBertModel}): pre-norm layers ({@link
 * EncoderConfig.PreNorm}: the first layer's {@code attn_norm} is the identity, {@code final_norm} after the last),
 * embeddings {@code norm(tok_embeddings[ids])} with no position table and no token types, rotary positions, one fused
 * {@code Wqkv} (3E, E), GeGLU: {@code Wo(act(input) * gate)} where {@code input, gate = Wi(x).chunk(2)} (the first
 * half activated), LayerNorms without bias ({@code norm_bias}) and projections without bias ({@code attention_bias},
 * {@code mlp_bias}). Layers alternate global attention and sliding-window local attention ({@link
 * EncoderConfig.SlidingWindow}): {@code layer_types} ({@code full_attention} / {@code sliding_attention}), or, in older
 * configs, every {@code global_attn_every_n_layers}-th layer global from layer 0; a local layer's query {@code i} sees
 * keys {@code |i - j| <= local_attention / 2} (transformers' {@code create_bidirectional_sliding_window_mask} with
 * {@code sliding_window = local_attention // 2}). Each kind of layer has its rotary theta: {@code
 * rope_parameters.full_attention} / {@code .sliding_attention} (transformers 5), or {@code global_rope_theta} / {@code
 * local_rope_theta}. transformers' {@code ModernBertConfig} defaults (ModernBERT-base: 22 layers, 768 wide, 8192
 * positions, local_attention 128, theta 160000 / 10000).
 *
 * <p>Refused with their key named: rope scaling (a {@code rope_type} other than {@code default}), a layer type other
 * than the two, a {@code head_dim} other than hidden / heads, a {@code hidden_activation} without a gated form.
 */
final class ModernBertFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.tok_embeddings.weight",
            null,
            null,
            "embeddings.norm.",
            "layers.%d.",
            "attn.Wqkv.",
            null,
            null,
            "attn.Wo.",
            "attn_norm.",
            "mlp.Wi.",
            "mlp.Wo.",
            "mlp_norm.");

    static final String FULL = "full_attention", SLIDING = "sliding_attention";

    @Override
    public List<String> modelTypes() {
        return List.of("modernbert");
    }

    @Override
    public String checkpointPrefix() {
        return "model.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        int hidden = r.integer("hidden_size", 768), heads = r.integer("num_attention_heads", 12);
        int layers = r.integer("num_hidden_layers", 22);
        if (heads > 0 && r.get("head_dim") != null && r.integer("head_dim", 0) != hidden / heads)
            throw AttnException.badInput(r.source() + ": head_dim " + r.get("head_dim") + " is not hidden_size "
                    + hidden + " / num_attention_heads " + heads);
        List<Boolean> local = new ArrayList<>();
        List<?> types = r.get("layer_types") instanceof List<?> l ? l : null;
        if (types != null) {
            for (Object t : types) {
                if (FULL.equals(t)) local.add(false);
                else if (SLIDING.equals(t)) local.add(true);
                else
                    throw AttnException.badInput(r.source() + ": layer_types holds \"" + t + "\" (attn runs \"" + FULL
                            + "\" and \"" + SLIDING + "\")");
            }
        } else {
            int every = r.integer("global_attn_every_n_layers", 3);
            if (every <= 0)
                throw AttnException.badInput(
                        r.source() + ": global_attn_every_n_layers must be positive, got " + every);
            for (int i = 0; i < layers; i++) local.add(i % every != 0);
        }
        int localAttention = r.integer("local_attention", 128);
        if (localAttention < 0)
            throw AttnException.badInput(r.source() + ": local_attention must be >= 0, got " + localAttention);
        double global = theta(r, FULL, "global_rope_theta", 160000.0);
        double localTheta = theta(r, SLIDING, "local_rope_theta", 10000.0);
        int d = heads > 0 ? hidden / heads : 0;
        boolean normBias = r.bool("norm_bias", false);
        boolean mlpBias = r.bool("mlp_bias", false), attnBias = r.bool("attention_bias", false);
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 50368),
                hidden,
                layers,
                heads,
                r.integer("intermediate_size", 1152),
                r.string("hidden_activation", "gelu"),
                (float) r.number("norm_eps", 1e-5),
                r.integer("max_position_embeddings", 8192),
                0,
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(
                        new EncoderConfig.Rotary((float) global, d),
                        EncoderConfig.Glu.GATE_FIRST,
                        attnBias,
                        attnBias,
                        mlpBias,
                        mlpBias,
                        new EncoderConfig.PreNorm("final_norm."),
                        normBias,
                        new EncoderConfig.SlidingWindow(
                                local, localAttention / 2, new EncoderConfig.Rotary((float) localTheta, d))));
    }

    /**
     * The rotary theta of one kind of layer: {@code rope_parameters[kind].rope_theta} (transformers 5), else the
     * older top-level key, else the default. Only the {@code default} rope type runs.
     */
    private static double theta(JsonFields r, String kind, String legacy, double dflt) {
        JsonFields p = r.object("rope_parameters");
        JsonFields of = p == null ? null : p.object(kind);
        if (of == null) return r.number(legacy, dflt);
        String type = of.string("rope_type", "default");
        if (!type.equals("default"))
            throw AttnException.badInput(r.source() + ": rope_parameters." + kind + ".rope_type \"" + type
                    + "\" is not supported (only \"default\": no rope scaling)");
        return of.number("rope_theta", r.number(legacy, dflt));
    }
}
