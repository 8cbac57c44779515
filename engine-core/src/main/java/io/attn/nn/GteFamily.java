package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.OpParams;
import io.attn.io.JsonFields;
import java.util.List;

/**
 * GTE ({@code model_type} {@code gte}, transformers' {@code GteModel}; {@code new}, Alibaba-NLP's remote-code
 * {@code NewModel} that gte-multilingual-base and gte-base-en-v1.5 ship, the same weights): BERT's keys and post-norm
 * layers with rotary positions (no position table; {@code rope_parameters.rope_theta}, or {@code rope_theta} for
 * {@code new}), one fused {@code qkv_proj} (3E, E) with biases, and a gated feed-forward: {@code up_gate_proj} (2F, E,
 * no bias) is [up; gate], {@code down_proj(up * act(gate))} with {@code hidden_act} (GELU). Token types when {@code
 * type_vocab_size} is not 0 (always type 0). transformers' {@code GteConfig} defaults (theta 160000, 8192 positions,
 * one token type); {@code new}'s of its {@code NewConfig} (theta 10000, 512 positions, no token types).
 *
 * <p>{@code new}'s {@code rope_scaling} {@code {"type": "ntk", "factor": F}} (gte-base-en-v1.5: theta 500000, factor
 * 2; gte-multilingual-base) is the remote code's fixed NTK scaling ({@link OpParams.Rope.Scaling#ntk}). Refused with
 * their key named: another rope scaling (a {@code mixed_b}, a factor below 1, another type; for {@code gte}, any
 * {@code rope_type} but {@code default}), {@code logn_attention_scale}, {@code layer_norm_type} other than {@code
 * layer_norm}, unpacked q/k/v ({@code pack_qkv: false}).
 */
final class GteFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            null,
            "embeddings.token_type_embeddings.weight",
            "embeddings.LayerNorm.",
            "encoder.layer.%d.",
            "attention.qkv_proj.",
            null,
            null,
            "attention.o_proj.",
            "attn_ln.",
            "mlp.up_gate_proj.",
            "mlp.down_proj.",
            "mlp_ln.");

    @Override
    public List<String> modelTypes() {
        return List.of("gte", "new");
    }

    @Override
    public String checkpointPrefix() {
        return "new.";
    }

    @Override
    public List<String> checkpointPrefixes() {
        return List.of("new.", "gte.");
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        boolean hub = modelType.equals("new");
        OpParams.Rope.Scaling ntk = OpParams.Rope.Scaling.NONE;
        if (hub) {
            if (r.get("rope_scaling") != null) ntk = ntk(r);
            if (!r.string("position_embedding_type", "rope").equals("rope"))
                throw AttnException.badInput(r.source() + ": position_embedding_type \""
                        + r.string("position_embedding_type", null) + "\" is not supported for GTE (only \"rope\")");
            if (r.bool("logn_attention_scale", false))
                throw AttnException.badInput(r.source() + ": logn_attention_scale true is not supported");
            if (!r.string("layer_norm_type", "layer_norm").equals("layer_norm"))
                throw AttnException.badInput(r.source() + ": layer_norm_type \"" + r.string("layer_norm_type", null)
                        + "\" is not supported (only \"layer_norm\")");
            if (!r.bool("pack_qkv", true))
                throw AttnException.badInput(
                        r.source() + ": pack_qkv false is not supported (GTE's weights hold one qkv_proj)");
        }
        int hidden = r.integer("hidden_size", 768), heads = r.integer("num_attention_heads", 12);
        if (ntk != OpParams.Rope.Scaling.NONE && r.get("rope_parameters") != null)
            throw AttnException.badInput(r.source() + ": rope_scaling and rope_parameters both set (the remote code"
                    + " reads rope_theta and rope_scaling; give one of them)");
        // the remote code reads rope_theta and rope_scaling itself (transformers' rope types do not apply there); a
        // config with transformers' rope_parameters is read as transformers' GTE reads it
        Rope rope = hub && r.get("rope_parameters") == null
                ? new Rope(r.number("rope_theta", 10000.0), 1.0, ntk)
                : Rope.read(r, hub ? 10000.0 : 160000.0, hub ? "rope_theta" : null)
                        .unscaled(r, "GTE");
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", hub ? 30528 : 250048),
                hidden,
                r.integer("num_hidden_layers", 12),
                heads,
                r.integer("intermediate_size", 3072),
                r.string("hidden_act", "gelu"),
                (float) r.number("layer_norm_eps", 1e-12),
                r.integer("max_position_embeddings", hub ? 512 : 8192),
                r.integer("type_vocab_size", hub ? 0 : 1),
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(
                        rope.rotary(hidden, heads), EncoderConfig.Glu.GATE_SECOND, true, true, false, true));
    }

    /**
     * The remote code's {@code rope_scaling} ({@code NewEmbeddings._init_rope}): {@code {"type": "ntk", "factor": F}}
     * with no {@code mixed_b}, its fixed NTK scaling ({@link OpParams.Rope.Scaling#ntk}). The remote code builds its
     * cos/sin cache for {@code max_position_embeddings * factor} positions, which takes the scaled frequencies for every
     * sequence length only when {@code factor > 1}; a factor of 1 scales nothing (the same frequencies either way).
     * Refused by name: another type (the remote code raises on them too), a {@code mixed_b}, a factor below 1 (its
     * frequencies would then depend on the sequence length).
     */
    private static OpParams.Rope.Scaling ntk(JsonFields r) {
        JsonFields rs = r.object("rope_scaling");
        String at = r.source() + ": rope_scaling ";
        String type = rs.string("type", null); // the remote code reads rope_scaling["type"] only
        if (!"ntk".equals(type))
            throw AttnException.badInput(at + "type " + (type == null ? "missing" : "\"" + type + "\"")
                    + " is not supported for GTE (only \"ntk\", as Alibaba-NLP's remote code)");
        if (rs.get("mixed_b") != null)
            throw AttnException.badInput(at + "mixed_b " + rs.get("mixed_b")
                    + " is not supported (attn runs the fixed NTK scaling, mixed_b null)");
        if (!(rs.get("factor") instanceof Number))
            throw AttnException.badInput(at + "factor is " + (rs.get("factor") == null ? "missing" : rs.get("factor"))
                    + ": a number is needed for ntk");
        double factor = rs.number("factor", 0);
        if (!(factor >= 1 && factor < Float.MAX_VALUE))
            throw AttnException.badInput(at + "factor " + factor
                    + " is not supported (at least 1: below it the remote code's frequencies depend on the length)");
        return factor == 1 ? OpParams.Rope.Scaling.NONE : OpParams.Rope.Scaling.ntk(factor);
    }

    /**
     * The rotary settings of a config: transformers 5's {@code rope_parameters} ({@code rope_theta}, {@code rope_type},
     * {@code partial_rotary_factor}), else a top-level {@code legacyTheta} key (the remote code's and the hub's older
     * configs') with the older {@code rope_scaling} object, else {@code theta}; {@code fraction} of the head size
     * rotates. {@code rope_type} (or {@code rope_scaling.type}) {@code default}, {@code linear} ({@code factor}) and
     * {@code llama3} ({@code factor}, {@code low_freq_factor}, {@code high_freq_factor}, {@code
     * original_max_position_embeddings}) are read into {@code scaling}; any other type is refused by name (they depend
     * on the sequence length or scale cos and sin: dynamic, yarn, longrope). A family without scaling refuses any
     * scaling with {@link #unscaled}.
     */
    record Rope(double theta, double fraction, OpParams.Rope.Scaling scaling) {
        Rope(double theta, double fraction) {
            this(theta, fraction, OpParams.Rope.Scaling.NONE);
        }

        static Rope read(JsonFields r, double theta, String legacyTheta) {
            JsonFields p = r.object("rope_parameters");
            if (p != null) return of(p, "rope_parameters", theta);
            if (legacyTheta != null) theta = r.number(legacyTheta, theta);
            JsonFields old = r.object("rope_scaling");
            return new Rope(
                    theta,
                    1.0,
                    old == null
                            ? OpParams.Rope.Scaling.NONE
                            : scaling(old, "rope_scaling", old.string("rope_type", old.string("type", "default"))));
        }

        /**
         * One {@code rope_parameters} object ({@code where} names it in messages): {@code rope_theta} (else {@code
         * theta}), {@code partial_rotary_factor}, the scaling its {@code rope_type} names.
         */
        static Rope of(JsonFields p, String where, double theta) {
            return new Rope(
                    p.number("rope_theta", theta),
                    p.number("partial_rotary_factor", 1.0),
                    scaling(p, where, p.string("rope_type", "default")));
        }

        static OpParams.Rope.Scaling scaling(JsonFields p, String where, String type) {
            String at = p.source() + ": " + where + ".";
            try {
                return switch (type) {
                    case "default" -> OpParams.Rope.Scaling.NONE;
                    case "linear" -> OpParams.Rope.Scaling.linear(required(p, at, "factor"));
                    case "llama3" ->
                        OpParams.Rope.Scaling.llama3(
                                required(p, at, "factor"),
                                required(p, at, "low_freq_factor"),
                                required(p, at, "high_freq_factor"),
                                (int) required(p, at, "original_max_position_embeddings"));
                    default ->
                        throw AttnException.badInput(at + "rope_type \"" + type + "\" is not supported (attn runs"
                                + " \"default\", \"linear\" and \"llama3\": no scaling that depends on the length or"
                                + " scales cos and sin)");
                };
            } catch (IllegalArgumentException e) {
                throw AttnException.badInput(at + "rope_type \"" + type + "\": " + e.getMessage());
            }
        }

        private static double required(JsonFields p, String at, String key) {
            if (!(p.get(key) instanceof Number))
                throw AttnException.badInput(at + key + " is " + (p.get(key) == null ? "missing" : p.get(key))
                        + ": a number is needed for this rope_type");
            return p.number(key, 0);
        }

        /** This, refused with its keys named when it scales the frequencies ({@code family} has no scaling). */
        Rope unscaled(JsonFields r, String family) {
            if (scaling.kind() != OpParams.Rope.Scaling.Kind.NONE)
                throw AttnException.badInput(r.source() + ": rope scaling (" + scaling.describe()
                        + ") is not supported for " + family + " (attn runs its plain rotary positions)");
            return this;
        }

        /** The rotary dims of a head of {@code hidden / heads}: {@code int(head_dim * fraction)}, as transformers. */
        EncoderConfig.Rotary rotary(int hidden, int heads) {
            if (heads <= 0 || hidden % heads != 0)
                throw AttnException.badInput(
                        "hidden_size " + hidden + " is not divisible by num_attention_heads " + heads);
            if (!(fraction > 0 && fraction <= 1))
                throw AttnException.badInput("the rotary fraction " + fraction + " must be in (0, 1]");
            return new EncoderConfig.Rotary((float) theta, (int) (hidden / heads * fraction), scaling);
        }
    }
}
