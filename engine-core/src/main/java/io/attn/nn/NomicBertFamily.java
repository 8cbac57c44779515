package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.List;

/**
 * NomicBERT ({@code model_type} {@code nomic_bert}: nomic-embed-text v1 / v1.5; transformers' {@code NomicBertModel},
 * or the remote code's config keys): BERT's post-norm layers with rotary positions (no position table; {@code
 * rope_parameters.rope_theta} / {@code rotary_emb_base}, a fraction {@code partial_rotary_factor} / {@code
 * rotary_emb_fraction} of each head rotating), one fused {@code Wqkv} (3E, E), SwiGLU: {@code fc2(act(fc12(x)) *
 * fc11(x))}, fc12 the gate, concatenated when loaded into one [gate; up] (2F, E) projection, and no biases (the remote
 * code's {@code qkv_proj_bias}, {@code mlp_fc1_bias}, {@code mlp_fc2_bias} turn them on). Token types (type 0).
 * transformers' {@code NomicBertConfig} defaults (theta 1000, 2048 positions, SiLU).
 *
 * <p>Refused with their key named: interleaved rotary ({@code rotary_emb_interleaved}: the ROPE op rotates halves),
 * rope scaling ({@code rotary_scaling_factor}, a {@code rope_type} other than {@code default}), pre-norm layers
 * ({@code prenorm}), {@code parallel_block}, {@code use_rms_norm}, {@code causal}, a {@code head_dim} other than hidden / heads.
 */
final class NomicBertFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            null,
            "embeddings.token_type_embeddings.weight",
            "emb_ln.",
            "encoder.layers.%d.",
            "attn.Wqkv.",
            null,
            null,
            "attn.out_proj.",
            "norm1.",
            "mlp.fc11.",
            "mlp.fc2.",
            "norm2.",
            "mlp.fc12.");

    @Override
    public List<String> modelTypes() {
        return List.of("nomic_bert");
    }

    @Override
    public String checkpointPrefix() {
        return "nomic_bert.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        if (r.bool("rotary_emb_interleaved", false))
            throw AttnException.badInput(
                    r.source() + ": rotary_emb_interleaved true is not supported (attn rotates halves, rotate_half)");
        if (r.get("rotary_scaling_factor") != null)
            throw AttnException.badInput(
                    r.source() + ": rotary_scaling_factor " + r.get("rotary_scaling_factor") + " is not supported");
        for (String key : List.of("prenorm", "parallel_block", "use_rms_norm", "causal"))
            if (r.bool(key, false))
                throw AttnException.badInput(
                        r.source() + ": " + key + " true is not supported (NomicBERT's post-norm LayerNorm encoder)");
        int hidden = r.integer("hidden_size", r.integer("n_embd", 768));
        int heads = r.integer("num_attention_heads", r.integer("n_head", 12));
        Object headDim = r.get("head_dim");
        if (headDim != null && heads > 0 && r.integer("head_dim", 0) != hidden / heads)
            throw AttnException.badInput(r.source() + ": head_dim " + headDim + " is not hidden_size " + hidden
                    + " / num_attention_heads " + heads);
        GteFamily.Rope rope = GteFamily.Rope.read(r, r.number("rotary_emb_base", 1000.0), null)
                .unscaled(r, "NomicBERT");
        if (r.object("rope_parameters") == null)
            rope = new GteFamily.Rope(rope.theta(), r.number("rotary_emb_fraction", 1.0));
        String act = r.string("hidden_act", null);
        if (act == null)
            act = switch (r.string("activation_function", "swiglu")) {
                case "swiglu" -> "silu";
                case "geglu" -> "gelu";
                default ->
                    throw AttnException.badInput(r.source() + ": activation_function \""
                            + r.string("activation_function", null) + "\" is not supported (swiglu, geglu)");
            };
        boolean qkvBias = r.bool("qkv_proj_bias", false);
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 30528),
                hidden,
                r.integer("num_hidden_layers", r.integer("n_layer", 12)),
                heads,
                r.integer("intermediate_size", r.integer("n_inner", 3072)),
                act,
                (float) r.number("layer_norm_eps", r.number("layer_norm_epsilon", 1e-12)),
                r.integer("max_position_embeddings", r.integer("n_positions", 2048)),
                r.integer("type_vocab_size", 2),
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(
                        rope.rotary(hidden, heads),
                        EncoderConfig.Glu.GATE_FIRST,
                        qkvBias,
                        qkvBias,
                        r.bool("mlp_fc1_bias", false),
                        r.bool("mlp_fc2_bias", false)));
    }
}
