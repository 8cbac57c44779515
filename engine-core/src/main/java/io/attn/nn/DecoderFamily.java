package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.List;

/**
 * The decoder embedders: Qwen3 ({@code qwen3}: Qwen3-Embedding), Qwen2 ({@code qwen2}: gte-Qwen2), Mistral ({@code
 * mistral}: e5-mistral) and Llama ({@code llama}), as transformers' {@code Qwen3Model}, {@code Qwen2Model}, {@code
 * MistralModel} and {@code LlamaModel} (without a language-model head): causal pre-norm layers of RMSNorm,
 * grouped-query attention ({@code num_key_value_heads}) with rotary positions, SwiGLU ({@code down(act(gate(x)) *
 * up(x))}), a final RMSNorm ({@link DecoderModel}). They differ in little: Qwen2 has biases on q, k and v; Qwen3 an
 * RMSNorm of each query and key head before the rotation and a {@code head_dim} of its own; Llama's {@code
 * attention_bias} and {@code mlp_bias} turn biases on. transformers' config defaults for each.
 *
 * <p>Mistral's {@code sliding_window} (or {@code layer_types} all {@code sliding_attention}) runs as a causal window
 * in every layer. Rope scaling {@code linear} and {@code llama3} (Llama 3.1+; {@code rope_parameters} or the hub's
 * older {@code rope_scaling}) rescale the frequencies. Refused, with the key named: other rope scaling (dynamic, yarn,
 * longrope), Qwen's
 * per-layer windows ({@code use_sliding_window} with {@code max_window_layers}), a {@code layer_types} mixing kinds,
 * an activation other than SiLU / GELU.
 */
final class DecoderFamily implements EncoderFamily {
    /** transformers' names, without the {@code model.} prefix of a causal-LM checkpoint. */
    static final Names NAMES = new Names(
            "embed_tokens.weight",
            null,
            null,
            null,
            "layers.%d.",
            "self_attn.q_proj.",
            "self_attn.k_proj.",
            "self_attn.v_proj.",
            "self_attn.o_proj.",
            "input_layernorm.",
            "mlp.up_proj.",
            "mlp.down_proj.",
            "post_attention_layernorm.",
            "mlp.gate_proj.");

    private final String modelType;
    private final int defaultHeads, defaultKvHeads, defaultPositions;
    private final double defaultTheta;

    private DecoderFamily(String modelType, int heads, int kvHeads, int positions, double theta) {
        this.modelType = modelType;
        this.defaultHeads = heads;
        this.defaultKvHeads = kvHeads;
        this.defaultPositions = positions;
        this.defaultTheta = theta;
    }

    // the defaults of a key a config leaves out (transformers' Qwen3Config, Qwen2Config, MistralConfig, LlamaConfig;
    // Llama's key/value heads default to the attention heads: 0 here); saved configs write every key
    static final DecoderFamily QWEN3 = new DecoderFamily("qwen3", 32, 32, 32768, 10000.0);
    static final DecoderFamily QWEN2 = new DecoderFamily("qwen2", 32, 32, 32768, 10000.0);
    static final DecoderFamily MISTRAL = new DecoderFamily("mistral", 32, 8, 4096 * 32, 10000.0);
    static final DecoderFamily LLAMA = new DecoderFamily("llama", 32, 0, 2048, 10000.0);

    @Override
    public List<String> modelTypes() {
        return List.of(modelType);
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
        int hidden = r.integer("hidden_size", 4096);
        int heads = r.integer("num_attention_heads", defaultHeads);
        int kvHeads = r.integer("num_key_value_heads", defaultKvHeads > 0 ? defaultKvHeads : heads);
        int headDim = r.integer("head_dim", heads > 0 ? hidden / heads : 0);
        int positions = r.integer("max_position_embeddings", defaultPositions);
        int window = slidingWindow(r, positions);
        GteFamily.Rope rope = GteFamily.Rope.read(r, defaultTheta, "rope_theta");
        if (!(rope.fraction() > 0 && rope.fraction() <= 1))
            throw AttnException.badInput("the rotary fraction " + rope.fraction() + " must be in (0, 1]");
        String act = r.string("hidden_act", "silu");
        boolean qwen2 = modelType.equals("qwen2"), llama = modelType.equals("llama");
        boolean attentionBias = r.bool("attention_bias", false);
        boolean qkvBias = qwen2 || ((llama || modelType.equals("qwen3")) && attentionBias);
        boolean outBias = (llama || modelType.equals("qwen3")) && attentionBias;
        boolean mlpBias = llama && r.bool("mlp_bias", false);
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 32000),
                hidden,
                r.integer("num_hidden_layers", 32),
                heads,
                r.integer("intermediate_size", 11008),
                act,
                (float) r.number("rms_norm_eps", 1e-6),
                positions,
                0,
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(
                        new EncoderConfig.Rotary(
                                (float) rope.theta(), (int) (headDim * rope.fraction()), rope.scaling()),
                        EncoderConfig.Glu.GATE_FIRST,
                        qkvBias,
                        outBias,
                        mlpBias,
                        mlpBias,
                        new EncoderConfig.Decoder(kvHeads, headDim, modelType.equals("qwen3"), "norm.", window)));
    }

    /**
     * Mistral's {@code sliding_window} (every layer: query i sees keys i - w < j <= i), or 0 when it is null or at
     * least the positions (then it never cuts). Refused with the key named: Qwen's windows ({@code use_sliding_window}:
     * per-layer windows from {@code max_window_layers}) and a {@code layer_types} that mixes kinds.
     */
    private int slidingWindow(JsonFields r, int positions) {
        List<Object> types = r.array("layer_types");
        boolean allSliding = types != null && !types.isEmpty() && types.stream().allMatch("sliding_attention"::equals);
        if (types != null && !allSliding)
            for (Object t : types)
                if (!"full_attention".equals(t))
                    throw AttnException.badInput(r.source() + ": layer_types holds \"" + t
                            + "\" among other kinds, and attn runs the same attention in every decoder layer");
        Object w = r.get("sliding_window");
        if (modelType.equals("mistral") || allSliding) {
            if (w == null) return 0;
            int win = r.integer("sliding_window", 0);
            if (win <= 0) throw AttnException.badInput(r.source() + ": sliding_window must be positive, got " + w);
            return win < positions ? win : 0;
        }
        if (r.bool("use_sliding_window", false) && w != null && r.integer("sliding_window", 0) < positions)
            throw AttnException.badInput(r.source() + ": use_sliding_window with sliding_window " + w + " below"
                    + " max_position_embeddings " + positions + " (Qwen's windows on the layers from max_window_layers)"
                    + " is not supported; Mistral's sliding_window is");
        return 0;
    }
}
