package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Hugging Face transformers' {@code BertModel} in eval mode, with absolute positions and without its pooler: the
 * encoder of the BERT-family sentence-embedding models (all-MiniLM, bge, e5, gte, ...).
 *
 * <pre>
 * x = LayerNorm(word_embeddings[ids] + token_type_embeddings[types] + position_embeddings[positions])
 * each layer (post-norm):  x = LN_a(x + dense_o(attention(query(x), key(x), value(x), padding)))
 *                          x = LN_o(x + dense_2(act(dense_1(x))))
 * </pre>
 *
 * State, under transformers' names without the {@code bert.} prefix: {@code embeddings.word_embeddings.weight (V,
 * E)}, {@code embeddings.position_embeddings.weight (P, E)}, {@code embeddings.token_type_embeddings.weight (T, E)},
 * {@code embeddings.LayerNorm.{weight,bias}}, and for each layer N {@code encoder.layer.N.attention.self.{query,key,
 * value}.*}, {@code .attention.output.dense.*}, {@code .attention.output.LayerNorm.*}, {@code .intermediate.dense.*}
 * {@code (F, E)}, {@code .output.dense.*} {@code (E, F)}, {@code .output.LayerNorm.*}.
 *
 * <p>Graph inputs: {@code input} ids {@code (B, L)}, {@code positions (B, L)} and {@code token_types (B, L)} (integral
 * values stored as float), and optionally {@code key_padding_mask (B, L)}, non-zero = padding (transformers'
 * {@code attention_mask == 0}); or, instead of padding, a ragged batch: {@code (1, T)} holding sequences of given
 * lengths one after another, each attending only to itself (positions restart at each sequence). Output: the last hidden state {@code (B, L, E)}. transformers adds the padding mask as
 * the most negative float; attn masks those keys out, which is the same softmax whenever a row keeps one key (the
 * first token is never padding). Immutable once loaded; thread-safe.
 */
public final class BertModel {
    /** Names of the extra graph inputs. */
    public static final String POSITIONS = "positions", TOKEN_TYPES = "token_types";

    private final BertConfig config;
    private final Tensor word, position, tokenType;
    private final LayerNorm embeddingNorm;
    private final List<TransformerEncoderLayer> layers = new ArrayList<>();

    public BertModel(StateDict sd, BertConfig c) {
        this.config = c;
        int e = c.hiddenSize(), f = c.intermediateSize(), h = c.numAttentionHeads();
        word = sd.take("embeddings.word_embeddings.weight", c.vocabSize(), e);
        position = sd.take("embeddings.position_embeddings.weight", c.maxPositionEmbeddings(), e);
        tokenType = sd.take("embeddings.token_type_embeddings.weight", c.typeVocabSize(), e);
        embeddingNorm = LayerNorm.load(sd, "embeddings.LayerNorm.", e, c.layerNormEps(), true);
        FeedForward.Activation act = BertConfig.activation(c.hiddenAct());
        LayerConfig lc = new LayerConfig(e, h, f, "gelu", c.layerNormEps(), false, true);
        for (int i = 0; i < c.numHiddenLayers(); i++) {
            String p = "encoder.layer." + i + ".";
            MultiheadAttention attn = new MultiheadAttention(
                    p + "attention",
                    e,
                    h,
                    Linear.load(sd, p + "attention.self.query.", e, e, true),
                    Linear.load(sd, p + "attention.self.key.", e, e, true),
                    Linear.load(sd, p + "attention.self.value.", e, e, true),
                    Linear.load(sd, p + "attention.output.dense.", e, e, true));
            FeedForward ff = new FeedForward(
                    Linear.load(sd, p + "intermediate.dense.", e, f, true),
                    Linear.load(sd, p + "output.dense.", f, e, true),
                    act);
            layers.add(new TransformerEncoderLayer(
                    lc,
                    attn,
                    ff,
                    LayerNorm.load(sd, p + "attention.output.LayerNorm.", e, c.layerNormEps(), true),
                    LayerNorm.load(sd, p + "output.LayerNorm.", e, c.layerNormEps(), true)));
        }
    }

    public BertConfig config() {
        return config;
    }

    /**
     * The last hidden state {@code (B, L, E)} of token ids {@code (B, L)}; {@code masks}: a key-padding mask, none, or
     * a ragged batch ({@link Masks#segments}: the L tokens of each row are several sequences, each attending to itself).
     */
    public Node forward(Forward f, Node ids, Node positions, Node tokenTypes, Masks masks) {
        GraphBuilder g = f.builder();
        if (ids.shape().rank() != 2)
            throw AttnException.shape("token ids have shape " + ids.shape() + ": expected (B, L) or (L)");
        int len = masks.segments() == null
                ? ids.shape().dim(1)
                : java.util.Arrays.stream(masks.segments()).max().orElse(0);
        if (len > config.maxPositionEmbeddings())
            throw AttnException.shape("a sequence of " + len + " tokens is longer than the model's "
                    + config.maxPositionEmbeddings() + " positions (max_position_embeddings)");
        Node x = g.add(
                g.add(
                        g.embedding(ids, g.constant("embeddings.word_embeddings.weight", word)),
                        g.embedding(tokenTypes, g.constant("embeddings.token_type_embeddings.weight", tokenType))),
                g.embedding(positions, g.constant("embeddings.position_embeddings.weight", position)));
        x = embeddingNorm.forward(f, x);
        for (TransformerEncoderLayer l : layers) x = l.forward(f, x, masks);
        return x;
    }
}
