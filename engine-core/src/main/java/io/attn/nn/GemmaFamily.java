package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.ArrayList;
import java.util.List;

/**
 * Gemma 3's text model ({@code gemma3_text}, transformers' {@code Gemma3TextModel}): EmbeddingGemma, and any Gemma 3
 * text checkpoint as an embedder. A decoder of {@link DecoderModel}'s shape with what {@link EncoderConfig.Gemma}
 * lists: scaled embeddings, four {@code (1 + weight)} RMSNorms per layer (the attention's and the feed-forward's
 * outputs normalised before their residuals), q/k norms, scores scaled by {@code query_pre_attn_scalar^-0.5}, GeGLU
 * with the tanh GELU ({@code hidden_activation}), {@code sliding_attention} layers with a window and a rotary base of
 * their own ({@code rope_parameters.sliding_attention}, or {@code rope_local_base_freq}) between {@code
 * full_attention} ones ({@code rope_parameters.full_attention}, or {@code rope_theta} and {@code rope_scaling}). With
 * {@code use_bidirectional_attention} (EmbeddingGemma) no causal mask, and the window is {@code |i - j| <=
 * sliding_window / 2}, as transformers builds it. transformers' {@code Gemma3TextConfig} defaults.
 *
 * <p>Refused with the key named: {@code attn_logit_softcapping} (Gemma 2's, null in Gemma 3), a layer type other than
 * the two, rope scaling other than linear / llama3. {@code final_logit_softcapping} concerns the language-model head,
 * which an embedder does not run.
 */
final class GemmaFamily implements EncoderFamily {
    /**
     * The other decoders' names ({@link DecoderFamily#NAMES}) but the feed-forward's pre-norm, {@code
     * pre_feedforward_layernorm} ({@code post_attention_layernorm} normalises the attention's output here).
     */
    static final Names NAMES = new Names(
            DecoderFamily.NAMES.word(),
            null,
            null,
            null,
            DecoderFamily.NAMES.layer(),
            DecoderFamily.NAMES.query(),
            DecoderFamily.NAMES.key(),
            DecoderFamily.NAMES.value(),
            DecoderFamily.NAMES.attentionOutput(),
            DecoderFamily.NAMES.attentionNorm(),
            DecoderFamily.NAMES.ffnIn(),
            DecoderFamily.NAMES.ffnOut(),
            "pre_feedforward_layernorm.",
            DecoderFamily.NAMES.ffnGate());

    /** The norms of each layer's attention output and feed-forward output, before their residuals. */
    static final String POST_ATTENTION_NORM = "post_attention_layernorm.",
            POST_FFN_NORM = "post_feedforward_layernorm.";

    @Override
    public List<String> modelTypes() {
        return List.of("gemma3_text");
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
    public EncoderConfig read(JsonFields r, String type) {
        int hidden = r.integer("hidden_size", 2304), layers = r.integer("num_hidden_layers", 26);
        int heads = r.integer("num_attention_heads", 8), kvHeads = r.integer("num_key_value_heads", 4);
        int headDim = r.integer("head_dim", 256), positions = r.integer("max_position_embeddings", 131072);
        if (r.get("attn_logit_softcapping") != null)
            throw AttnException.badInput(r.source() + ": attn_logit_softcapping " + r.get("attn_logit_softcapping")
                    + " is not supported (Gemma 2's tanh capping of the scores; Gemma 3 has none)");
        boolean bidirectional = r.bool("use_bidirectional_attention", false);
        List<Boolean> local = DecoderFamily.layerTypes(r, layers);
        if (local == null) { // transformers' default: every sliding_window_pattern-th layer full, the others sliding
            int pattern = r.integer("sliding_window_pattern", 6);
            if (pattern <= 0)
                throw AttnException.badInput(r.source() + ": sliding_window_pattern must be positive, got " + pattern);
            local = new ArrayList<>();
            for (int i = 0; i < layers; i++) local.add((i + 1) % pattern != 0);
        }
        int window = 4096; // Gemma3TextConfig's default; null: no window
        if (r.map().containsKey("sliding_window")) {
            window = r.get("sliding_window") == null ? 0 : r.integer("sliding_window", 0);
            if (r.get("sliding_window") != null && window <= 0)
                throw AttnException.badInput(
                        r.source() + ": sliding_window must be positive, got " + r.get("sliding_window"));
        }
        // a window that never cuts (its reach at least the positions) is none
        if ((bidirectional ? window / 2 : window) >= positions) window = 0;
        GteFamily.Rope full = rope(r, "full_attention", "rope_theta", 1_000_000.0, true);
        GteFamily.Rope sliding = rope(r, "sliding_attention", "rope_local_base_freq", 10_000.0, false);
        double queryScalar = r.number("query_pre_attn_scalar", 256);
        if (!(queryScalar > 0))
            throw AttnException.badInput(r.source() + ": query_pre_attn_scalar must be positive, got " + queryScalar);
        boolean bias = r.bool("attention_bias", false);
        String act = r.string("hidden_activation", "gelu_pytorch_tanh");
        try {
            EncoderConfig.gluActivation(act);
        } catch (AttnException e) {
            throw AttnException.badInput(r.source() + ": hidden_activation \"" + act
                    + "\" is not supported (gelu_pytorch_tanh, gelu_new, gelu, silu, swish)");
        }
        EncoderConfig.Gemma gemma = new EncoderConfig.Gemma(
                (float) Math.sqrt(hidden),
                (float) Math.pow(queryScalar, -0.5),
                bidirectional,
                rotary(sliding, headDim));
        return new EncoderConfig(
                type,
                r.integer("vocab_size", 262_208),
                hidden,
                layers,
                heads,
                r.integer("intermediate_size", 9216),
                act,
                (float) r.number("rms_norm_eps", 1e-6),
                positions,
                0,
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(
                        rotary(full, headDim),
                        EncoderConfig.Glu.GATE_FIRST,
                        bias,
                        bias,
                        false,
                        false,
                        new EncoderConfig.Decoder(kvHeads, headDim, true, "norm.", window, local, gemma)));
    }

    /**
     * One kind of layer's rotary settings, as transformers' {@code Gemma3TextConfig} fills them in: {@code
     * rope_parameters[kind]} when the config has it (transformers 5), its {@code rope_theta} else the older top-level
     * {@code legacyTheta} ({@code rope_theta}, {@code rope_local_base_freq}) else the default; a flat {@code
     * rope_parameters} without the kinds counts for neither (transformers ignores its keys). A top-level {@code
     * rope_scaling} applies to the full-attention layers only, over what {@code rope_parameters} says; one that names
     * its kind as {@code type} alone is refused (transformers 5 keeps the default rope for it).
     */
    private static GteFamily.Rope rope(JsonFields r, String kind, String legacyTheta, double dflt, boolean full) {
        JsonFields p = r.object("rope_parameters");
        JsonFields of = p == null ? null : p.object(kind);
        double theta = r.number(legacyTheta, dflt);
        GteFamily.Rope rope =
                of != null ? GteFamily.Rope.of(of, "rope_parameters." + kind, theta) : new GteFamily.Rope(theta, 1.0);
        JsonFields old = full ? r.object("rope_scaling") : null;
        if (old == null) return rope;
        if (old.get("rope_type") == null)
            throw AttnException.badInput(r.source() + ": rope_scaling names its kind as \"type\" "
                    + old.get("type") + " without \"rope_type\" (transformers 5 reads no scaling from it for Gemma 3;"
                    + " write rope_type)");
        return new GteFamily.Rope(
                rope.theta(),
                rope.fraction(),
                GteFamily.Rope.scaling(old, "rope_scaling", old.string("rope_type", "default")));
    }

    private static EncoderConfig.Rotary rotary(GteFamily.Rope rope, int headDim) {
        if (!(rope.fraction() > 0 && rope.fraction() <= 1))
            throw AttnException.badInput("the rotary fraction " + rope.fraction() + " must be in (0, 1]");
        return new EncoderConfig.Rotary((float) rope.theta(), (int) (headDim * rope.fraction()), rope.scaling());
    }
}
