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

    /** BERT's names ({@link BertFamily#NAMES}) without the position table, with the gated feed-forward's. */
    static final EncoderFamily.Names NAMES = new EncoderFamily.Names(
            BertFamily.NAMES.word(),
            null,
            BertFamily.NAMES.tokenType(),
            BertFamily.NAMES.embeddingNorm(),
            BertFamily.NAMES.layer(),
            BertFamily.NAMES.query(),
            BertFamily.NAMES.key(),
            BertFamily.NAMES.value(),
            BertFamily.NAMES.attentionOutput(),
            BertFamily.NAMES.attentionNorm(),
            "mlp.gated_layers.",
            "mlp.wo.",
            "mlp.layernorm.");

    /** A {@code bert} config whose {@code position_embedding_type} is {@code alibi}. */
    static EncoderConfig read(JsonFields r, String modelType) {
        BertFamily.checkEncoder(r);
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
