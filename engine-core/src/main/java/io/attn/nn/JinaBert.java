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
 *
 * <p>jina-embeddings-v2-base-code is the remote code's other architecture, jina-bert-v2-qk-post-norm, which its config
 * names in {@code _name_or_path} (as text-embeddings-inference tells the two apart): a LayerNorm of the whole query
 * and key projections before the heads split ({@code attention.self.layer_norm_q} / {@code layer_norm_k}), a second
 * norm of the attention block ({@code layer_norm_1} over the layer's input plus BERT's attention output), and the
 * feed-forward {@code mlp.up_gated_layer} (2F, E, no bias) as {@code up * act(gated)} of its [up; gated] halves,
 * {@code mlp.down_layer}, {@code layer_norm_2} over the residual sum ({@link #CODE_NAMES}).
 */
final class JinaBert {
    private JinaBert() {}

    /** BERT's names ({@link BertFamily#NAMES}) without the position table, with the gated feed-forward's. */
    static final EncoderFamily.Names NAMES =
            bertWith("mlp.gated_layers.", "mlp.wo.", "mlp.layernorm.", null, null, null);

    /** jina-bert-v2-qk-post-norm's names (jina-embeddings-v2-base-code). */
    static final EncoderFamily.Names CODE_NAMES = bertWith(
            "mlp.up_gated_layer.",
            "mlp.down_layer.",
            "layer_norm_2.",
            "attention.self.layer_norm_q.",
            "attention.self.layer_norm_k.",
            "layer_norm_1.");

    /** BERT's names without the position table, with these feed-forward and norm names. */
    private static EncoderFamily.Names bertWith(
            String ffnIn, String ffnOut, String ffnNorm, String queryNorm, String keyNorm, String second) {
        EncoderFamily.Names b = BertFamily.NAMES;
        return new EncoderFamily.Names(
                b.word(),
                null,
                b.tokenType(),
                b.embeddingNorm(),
                b.layer(),
                b.query(),
                b.key(),
                b.value(),
                b.attentionOutput(),
                b.attentionNorm(),
                ffnIn,
                ffnOut,
                ffnNorm,
                null,
                queryNorm,
                keyNorm,
                second);
    }

    /** The remote code's architecture of jina-embeddings-v2-base-code, named by its configs' {@code _name_or_path}. */
    static final String QK_POST_NORM = "jinaai/jina-bert-v2-qk-post-norm";

    /** A {@code bert} config whose {@code position_embedding_type} is {@code alibi}. */
    static EncoderConfig read(JsonFields r, String modelType) {
        BertFamily.checkEncoder(r);
        String ff = r.string("feed_forward_type", "original");
        if (!ff.equals("geglu"))
            throw AttnException.badInput(r.source() + ": position_embedding_type \"alibi\" with feed_forward_type \""
                    + ff + "\": attn runs JinaBERT with feed_forward_type geglu (jina-embeddings-v2's; reglu's"
                    + " ReLU-gated feed-forward is not run yet)");
        String act = "gelu"; // the remote code's geglu: nn.GELU(), the exact form, whatever hidden_act says
        boolean code = QK_POST_NORM.equals(r.string("_name_or_path", null));
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
                code ? CODE_NAMES : NAMES,
                new EncoderConfig.Variant(
                        null,
                        code ? EncoderConfig.Glu.GATE_SECOND : EncoderConfig.Glu.GATE_FIRST,
                        true,
                        true,
                        false,
                        true));
    }
}
