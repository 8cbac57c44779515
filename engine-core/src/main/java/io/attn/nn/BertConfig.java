package io.attn.nn;

import io.attn.AttnException;
import java.util.Map;

/**
 * The configuration of a Hugging Face {@code BertModel} ({@code transformers.BertConfig}), under its own key names in
 * a config JSON: {@code {"module":"BertModel","vocab_size":30522,"hidden_size":384,"num_hidden_layers":6,
 * "num_attention_heads":12,"intermediate_size":1536,"hidden_act":"gelu","layer_norm_eps":1e-12,
 * "max_position_embeddings":512,"type_vocab_size":2}}. Missing keys take transformers' defaults (BERT-base).
 *
 * @param hiddenAct {@code gelu} (exact, erf form), {@code gelu_new} / {@code gelu_pytorch_tanh} (tanh approximation)
 *     or {@code relu}
 */
public record BertConfig(
        int vocabSize,
        int hiddenSize,
        int numHiddenLayers,
        int numAttentionHeads,
        int intermediateSize,
        String hiddenAct,
        float layerNormEps,
        int maxPositionEmbeddings,
        int typeVocabSize) {
    public BertConfig {
        positive("vocab_size", vocabSize);
        positive("hidden_size", hiddenSize);
        positive("num_hidden_layers", numHiddenLayers);
        positive("num_attention_heads", numAttentionHeads);
        positive("intermediate_size", intermediateSize);
        positive("max_position_embeddings", maxPositionEmbeddings);
        positive("type_vocab_size", typeVocabSize);
        if (hiddenSize % numAttentionHeads != 0)
            throw AttnException.badInput(
                    "hidden_size " + hiddenSize + " is not divisible by num_attention_heads " + numAttentionHeads);
        if (!(layerNormEps > 0)) throw AttnException.badInput("layer_norm_eps must be positive, got " + layerNormEps);
        activation(hiddenAct); // validates
    }

    /**
     * The config of a Hugging Face {@code config.json} ({@code model_type} {@code "bert"}), transformers' defaults for
     * missing keys; the keys the engine does not use are ignored, as transformers keeps them without effect here.
     *
     * @throws AttnException BAD_INPUT naming {@code source} and the key: another {@code model_type}, relative position
     *     embeddings, a BERT decoder, a bad value
     */
    public static BertConfig fromHuggingFace(Map<String, Object> config, String source) {
        ModelConfig.Reader r = new ModelConfig.Reader(config, source);
        String type = r.string("model_type", null);
        if (type == null) throw AttnException.badInput(source + ": no \"model_type\"");
        if (!type.equals("bert"))
            throw AttnException.badInput(source + ": model_type \"" + type
                    + "\" is not supported (attn runs model_type \"bert\": BERT, MiniLM, bge, e5, gte, ...)");
        String pos = r.string("position_embedding_type", "absolute");
        if (!pos.equals("absolute"))
            throw AttnException.badInput(
                    source + ": position_embedding_type \"" + pos + "\" is not supported (only \"absolute\")");
        if (r.bool("is_decoder", false) || r.bool("add_cross_attention", false))
            throw AttnException.badInput(
                    source + ": a BERT decoder (is_decoder / add_cross_attention) is not supported");
        return read(r);
    }

    /** The config's keys through {@code r}, transformers' defaults for missing ones; errors name {@code r}'s source. */
    static BertConfig read(ModelConfig.Reader r) {
        try {
            return new BertConfig(
                    r.integer("vocab_size", 30522),
                    r.integer("hidden_size", 768),
                    r.integer("num_hidden_layers", 12),
                    r.integer("num_attention_heads", 12),
                    r.integer("intermediate_size", 3072),
                    r.string("hidden_act", "gelu"),
                    (float) r.number("layer_norm_eps", 1e-12),
                    r.integer("max_position_embeddings", 512),
                    r.integer("type_vocab_size", 2));
        } catch (AttnException e) {
            if (e.getMessage().startsWith(r.source)) throw e;
            throw new AttnException(e.code(), r.source + ": " + e.getMessage());
        }
    }

    /** The feed-forward activation named by {@code hidden_act}. */
    static FeedForward.Activation activation(String hiddenAct) {
        return switch (hiddenAct) {
            case "gelu" -> FeedForward.Activation.GELU;
            case "gelu_new", "gelu_pytorch_tanh" -> FeedForward.Activation.GELU_TANH;
            case "relu" -> FeedForward.Activation.RELU;
            case null -> throw AttnException.badInput("hidden_act is missing");
            default ->
                throw AttnException.badInput(
                        "hidden_act \"" + hiddenAct + "\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)");
        };
    }

    private static void positive(String key, int v) {
        if (v <= 0) throw AttnException.badInput(key + " must be positive, got " + v);
    }
}
