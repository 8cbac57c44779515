package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoder embedder's transformer ({@link DecoderFamily}: transformers' {@code Qwen3Model}, {@code Qwen2Model},
 * {@code MistralModel}, {@code LlamaModel}) in eval mode, built from the blocks the encoders share: the embedding
 * table, {@link TransformerEncoderLayer} in its pre-norm form with {@link RmsNorm}s, {@link MultiheadAttention} with
 * grouped key/value heads, rotary positions and (Qwen3) q/k norms, and the gated {@link FeedForward}.
 *
 * <pre>
 * x = embed_tokens[ids]
 * each layer (pre-norm):  x = x + o_proj(causal_attention(rope(q_norm(q_proj(n))), rope(k_norm(k_proj(n))), v_proj(n)))
 *                                 where n = input_layernorm(x)
 *                         x = x + down_proj(silu(gate_proj(m)) * up_proj(m)),  m = post_attention_layernorm(x)
 * x = norm(x)
 * </pre>
 *
 * Gemma 3 ({@link GemmaFamily}) adds what {@link EncoderConfig.Gemma} lists: scaled embeddings, {@code (1 + weight)}
 * norms, norms of the attention's and the feed-forward's outputs before the residuals, its own score scale, local
 * rotary positions, and (EmbeddingGemma) bidirectional attention.
 *
 * <p>Graph inputs as {@link EncoderModel}'s (ids, positions from 0, a key-padding mask or a ragged batch); the attention
 * is causal (but a bidirectional Gemma's: {@link #causal}). Its output is the last hidden state {@code (B, L, E)}, as
 * {@code AutoModel} gives it; the embedder pools it as the folder says (the last token for Qwen3-Embedding, the mean
 * for EmbeddingGemma), a classifier head reads the last non-pad token. Immutable once loaded; thread-safe.
 */
public final class DecoderModel {
    private final EncoderConfig config;
    private final EncoderModel.Table word;
    private final List<TransformerEncoderLayer> layers = new ArrayList<>();
    private final RmsNorm norm;

    public DecoderModel(StateDict sd, EncoderConfig c) {
        EncoderConfig.Decoder d = c.variant().decoder();
        if (d == null) throw new IllegalArgumentException(c.modelType() + " is not a decoder");
        this.config = c;
        EncoderFamily.Names n = c.names();
        EncoderConfig.Variant v = c.variant();
        int e = c.hiddenSize(), h = c.numAttentionHeads(), hd = d.headDim(), kv = d.kvHeads();
        float eps = c.layerNormEps();
        word = EncoderModel.Table.load(sd, n.word(), c.vocabSize(), e);
        EncoderConfig.Gemma gemma = d.gemma();
        LayerConfig lc = new LayerConfig(e, h, c.intermediateSize(), "gelu", eps, true, false);
        for (int i = 0; i < c.numHiddenLayers(); i++) {
            String p = n.layer(i), attn = p + "self_attn";
            MultiheadAttention a = new MultiheadAttention(
                    attn,
                    e,
                    h,
                    kv,
                    hd,
                    Linear.load(sd, p + n.query(), e, h * hd, v.qkvBias()),
                    Linear.load(sd, p + n.key(), e, kv * hd, v.qkvBias()),
                    Linear.load(sd, p + n.value(), e, kv * hd, v.qkvBias()),
                    Linear.load(sd, p + n.attentionOutput(), h * hd, e, v.outBias()),
                    d.qkNorm() ? rmsNorm(sd, attn + ".q_norm.", hd, eps, gemma) : null,
                    d.qkNorm() ? rmsNorm(sd, attn + ".k_norm.", hd, eps, gemma) : null,
                    gemma != null ? gemma.attentionScale() : (float) (1.0 / Math.sqrt(hd)));
            layers.add(new TransformerEncoderLayer(
                    lc,
                    a,
                    EncoderModel.feedForward(sd, p, c),
                    rmsNorm(sd, p + n.attentionNorm(), e, eps, gemma),
                    rmsNorm(sd, p + n.ffnNorm(), e, eps, gemma),
                    gemma != null ? rmsNorm(sd, p + GemmaFamily.POST_ATTENTION_NORM, e, eps, gemma) : null,
                    gemma != null ? rmsNorm(sd, p + GemmaFamily.POST_FFN_NORM, e, eps, gemma) : null));
        }
        norm = rmsNorm(sd, d.finalNorm(), e, eps, gemma);
    }

    /** An RMSNorm: Gemma's scale by {@code 1 + weight}, the others' by {@code weight}. */
    private static RmsNorm rmsNorm(StateDict sd, String prefix, int dim, float eps, EncoderConfig.Gemma gemma) {
        return gemma != null ? RmsNorm.loadOffset(sd, prefix, dim, eps) : RmsNorm.load(sd, prefix, dim, eps);
    }

    /** Whether the attention is causal: every decoder's but a bidirectional Gemma's (EmbeddingGemma). */
    public boolean causal() {
        return config.variant().decoder().causal();
    }

    public EncoderConfig config() {
        return config;
    }

    /**
     * The last hidden state {@code (B, L, E)} of token ids {@code (B, L)} at {@code positions (B, L)}; {@code masks}
     * a key-padding mask, none, or a ragged batch, and causal.
     */
    public Node forward(Forward f, Node ids, Node positions, Masks masks) {
        GraphBuilder g = f.builder();
        if (ids.shape().rank() != 2)
            throw AttnException.shape("token ids have shape " + ids.shape() + ": expected (B, L) or (L)");
        if (masks.causal() != causal())
            throw new IllegalArgumentException(
                    causal() ? "this decoder's attention is causal" : "this model's attention is bidirectional");
        int len = masks.segments() == null
                ? ids.shape().dim(1)
                : java.util.Arrays.stream(masks.segments()).max().orElse(0);
        if (len > config.maxTokens())
            throw AttnException.shape("a sequence of " + len + " tokens is longer than the model's "
                    + config.maxTokens() + " positions (max_position_embeddings)");
        f.segments(masks.segments());
        f.padding(masks.keyPaddingKind() == io.attn.graph.MaskKind.BOOL ? masks.keyPadding() : null);
        Node x = word.lookup(g, ids);
        EncoderConfig.Decoder d = config.variant().decoder();
        EncoderConfig.Gemma gemma = d.gemma();
        if (gemma != null) x = g.scale(x, gemma.embedScale());
        // the sliding window (Mistral's in every layer, Qwen's and Gemma's in some): keys i - w < j <= i, or |i - j| <=
        // w / 2 for a bidirectional Gemma; a rule in the op (never an (L, S) mask)
        int w = d.slidingWindow();
        Masks windowed = w <= 0
                ? masks
                : d.causal() ? masks.window(w - 1, io.attn.graph.MaskSpec.UNBOUNDED) : masks.window(w / 2, w / 2);
        for (int i = 0; i < layers.size(); i++) {
            TransformerEncoderLayer l = layers.get(i);
            Masks m = d.windowed(i) ? windowed : masks;
            EncoderConfig.Rotary rotary = gemma != null && d.slidingLayer(i)
                    ? gemma.localRotary()
                    : config.variant().rotary();
            x = l.forward(f, x, in -> l.selfAttn().forwardRotary(f, in, m, rotary, positions));
        }
        return norm.forward(f, x);
    }
}
