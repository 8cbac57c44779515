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
 * <p>Mistral's {@code sliding_window} runs as a causal window in every layer, Qwen's ({@code use_sliding_window}) in
 * the layers from {@code max_window_layers} on, or in the {@code sliding_attention} layers of {@code layer_types}. Rope scaling {@code linear} and {@code llama3} (Llama 3.1+; {@code rope_parameters} or the hub's
 * older {@code rope_scaling}) rescale the frequencies. Refused, with the key named: other rope scaling (dynamic, yarn,
 * longrope), a layer type other than {@code full_attention} / {@code sliding_attention}, an activation other than
 * SiLU / GELU.
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
        Window window = slidingWindow(r, positions, r.integer("num_hidden_layers", 32));
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
                        new EncoderConfig.Decoder(
                                kvHeads, headDim, modelType.equals("qwen3"), "norm.", window.size(), window.layers())));
    }

    /**
     * A config's {@code layer_types}, per layer whether it is {@code sliding_attention} (the other kind is {@code
     * full_attention}); null when the config has none. Refused with the key named: another layer kind, another length
     * than the layers.
     */
    static List<Boolean> layerTypes(JsonFields r, int numLayers) {
        List<Object> types = r.array("layer_types");
        if (types == null) return null;
        if (types.size() != numLayers)
            throw AttnException.badInput(r.source() + ": layer_types has " + types.size() + " entries for " + numLayers
                    + " layers (num_hidden_layers)");
        List<Boolean> out = new java.util.ArrayList<>();
        for (Object t : types) {
            if (!"full_attention".equals(t) && !"sliding_attention".equals(t))
                throw AttnException.badInput(r.source() + ": layer_types holds \"" + t
                        + "\" (attn runs \"full_attention\" and \"sliding_attention\" decoder layers)");
            out.add("sliding_attention".equals(t));
        }
        return out;
    }

    /** A decoder's sliding window: {@code size} (0: none) and the layers it applies to (null: every layer). */
    record Window(int size, List<Boolean> layers) {
        static final Window NONE = new Window(0, null);
    }

    /**
     * The sliding window (query i sees keys i - w < j <= i) and its layers, as transformers reads them: {@code
     * layer_types} when the config has it (transformers 5 saves it: {@code sliding_attention} layers take the window,
     * {@code full_attention} ones do not); else Mistral's {@code sliding_window} in every layer, and Qwen's {@code
     * use_sliding_window} on the layers from {@code max_window_layers} on. Qwen's {@code sliding_window} counts only
     * with {@code use_sliding_window} (transformers sets it to null otherwise). A window null or at least the positions
     * never cuts: none. Refused with the key named: another layer kind, a {@code layer_types} of another length than the
     * layers, sliding layers without a window.
     */
    private Window slidingWindow(JsonFields r, int positions, int numLayers) {
        boolean qwen = modelType.startsWith("qwen");
        Object w = r.get("sliding_window");
        if (qwen && !r.bool("use_sliding_window", false)) w = null;
        int win = 0;
        if (w != null) {
            win = r.integer("sliding_window", 0);
            if (win <= 0) throw AttnException.badInput(r.source() + ": sliding_window must be positive, got " + w);
        }
        List<Boolean> layers = new java.util.ArrayList<>();
        List<Boolean> types = layerTypes(r, numLayers);
        if (types != null) {
            layers.addAll(types);
            if (w == null && layers.contains(true))
                throw AttnException.badInput(r.source() + ": layer_types holds \"sliding_attention\" but there is no"
                        + " sliding_window" + (qwen ? " (use_sliding_window is false)" : ""));
        } else if (w != null) {
            int first = qwen ? r.integer("max_window_layers", 28) : 0;
            for (int i = 0; i < numLayers; i++) layers.add(i >= first);
        }
        if (win == 0 || win >= positions || !layers.contains(true)) return Window.NONE;
        return new Window(win, layers.contains(false) ? List.copyOf(layers) : null);
    }
}
