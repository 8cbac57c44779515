package io.attn.nn;

import io.attn.AttnException;

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
