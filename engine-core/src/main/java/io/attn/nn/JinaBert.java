package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;

/**
 * JinaBERT (jina-embeddings-v2-small-en, -base-en, -base-de, -base-zh, -base-es, ...): {@code model_type} {@code bert}
 * with {@code position_embedding_type} {@code alibi} and {@code feed_forward_type} {@code geglu}. Its
 * hub folders point {@code auto_map} at Jina AI's remote code, which attn does not run: the model is read from its
 * config and weights, as text-embeddings-inference reads it. BERT's embeddings without a position table, BERT's
 * post-norm attention block, ALiBi's bias on every layer's scores ({@code -slope_h |j - i|}, {@link
 * EncoderConfig#ALIBI}), and a gated feed-forward: {@code mlp.gated_layers} (2F, E, no bias), the GELU of its first
 * half times its second, {@code mlp.wo} (E, F), {@code mlp.layernorm} over the residual sum. The remote code's {@code
 * geglu} is the exact (erf) GELU; its {@code reglu} (ReLU-gated) is refused by name.
 */
final class JinaBert {
    private JinaBert() {}

    static final EncoderFamily.Names NAMES = new EncoderFamily.Names(
            "embeddings.word_embeddings.weight",
            null,
            "embeddings.token_type_embeddings.weight",
            "embeddings.LayerNorm.",
            "encoder.layer.%d.",
            "attention.self.query.",
            "attention.self.key.",
            "attention.self.value.",
            "attention.output.dense.",
            "attention.output.LayerNorm.",
            "mlp.gated_layers.",
            "mlp.wo.",
            "mlp.layernorm.");

    /** A {@code bert} config whose {@code position_embedding_type} is {@code alibi}. */
    static EncoderConfig read(JsonFields r, String modelType) {
        if (r.bool("is_decoder", false) || r.bool("add_cross_attention", false))
            throw AttnException.badInput(
                    r.source() + ": a decoder (is_decoder / add_cross_attention) is not supported: attn runs encoders");
        String ff = r.string("feed_forward_type", "original");
        if (!ff.equals("geglu"))
            throw AttnException.badInput(r.source() + ": position_embedding_type \"alibi\" with feed_forward_type \""
                    + ff + "\": attn runs JinaBERT with feed_forward_type geglu (jina-embeddings-v2's; reglu's"
                    + " ReLU-gated feed-forward is not run yet)");
        String act = "gelu"; // the remote code's geglu: nn.GELU(), the exact form, whatever hidden_act says
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 30528),
                r.integer("hidden_size", 768),
                r.integer("num_hidden_layers", 12),
                r.integer("num_attention_heads", 12),
                r.integer("intermediate_size", 3072),
                act,
                (float) r.number("layer_norm_eps", 1e-12),
                r.integer("max_position_embeddings", 8192),
                r.integer("type_vocab_size", 2),
                0,
                EncoderConfig.ALIBI,
                NAMES,
                new EncoderConfig.Variant(null, EncoderConfig.Glu.GATE_FIRST, true, true, false, true));
    }
}
