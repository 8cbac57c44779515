package io.attn.nn;

import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import java.util.function.UnaryOperator;

/**
 * {@code torch.nn.TransformerEncoderLayer} (batch_first, eval mode). State: {@code self_attn.*}, {@code linear1.*},
 * {@code linear2.*}, {@code norm1.*}, {@code norm2.*}.
 *
 * <pre>
 * post-norm: x = norm1(x + self_attn(x));  x = norm2(x + ff(x))
 *            (with a second attention norm, jina-bert-v2-qk-post-norm's: a = norm1(x + self_attn(x));
 *             x = second(x + a);  x = norm2(x + ff(x)))
 * pre-norm:  x = x + self_attn(norm1(x));  x = x + ff(norm2(x))
 * sandwich:  x = x + post_attn(self_attn(norm1(x)));  x = x + post_ff(ff(norm2(x)))   (Gemma)
 * </pre>
 */
public final class TransformerEncoderLayer {
    private final LayerConfig config;
    private final MultiheadAttention selfAttn;
    private final FeedForward ff;
    private final Norm norm1, norm2;
    private final Norm postAttn, postFf; // Gemma's norms of the blocks' outputs before the residuals; null: none
    private final Norm second; // a post-norm layer's second attention norm over x + norm1(x + attn) (JinaBERT code)

    public TransformerEncoderLayer(StateDict sd, String prefix, LayerConfig c) {
        this.config = c;
        selfAttn = new MultiheadAttention(sd, prefix + "self_attn.", c.dModel(), c.nhead(), c.bias());
        ff = FeedForward.load(sd, prefix, c);
        norm1 = LayerNorm.load(sd, prefix + "norm1.", c.dModel(), c.layerNormEps(), c.bias());
        norm2 = LayerNorm.load(sd, prefix + "norm2.", c.dModel(), c.layerNormEps(), c.bias());
        postAttn = null;
        postFf = null;
        second = null;
    }

    /**
     * Built from parts (a model whose checkpoint names its pieces otherwise, such as {@link EncoderModel} and, with
     * RMSNorm and pre-norm, {@link DecoderModel}).
     */
    TransformerEncoderLayer(LayerConfig c, MultiheadAttention selfAttn, FeedForward ff, Norm norm1, Norm norm2) {
        this(c, selfAttn, ff, norm1, norm2, null, null);
    }

    /**
     * Pre-norm with "sandwich" norms (Gemma): {@code x = x + postAttn(self_attn(norm1(x))); x = x +
     * postFf(ff(norm2(x)))}.
     */
    TransformerEncoderLayer(
            LayerConfig c,
            MultiheadAttention selfAttn,
            FeedForward ff,
            Norm norm1,
            Norm norm2,
            Norm postAttn,
            Norm postFf) {
        if ((postAttn != null || postFf != null) && !c.normFirst())
            throw new IllegalArgumentException("norms of the blocks' outputs go with pre-norm layers");
        this.config = c;
        this.selfAttn = selfAttn;
        this.ff = ff;
        this.norm1 = norm1;
        this.norm2 = norm2;
        this.postAttn = postAttn;
        this.postFf = postFf;
        this.second = null;
    }

    /**
     * Post-norm with a second attention norm (jina-bert-v2-qk-post-norm's {@code layer_norm_1}): {@code a =
     * norm1(x + self_attn(x)); x = second(x + a); x = norm2(x + ff(x))}.
     */
    TransformerEncoderLayer(
            LayerConfig c, MultiheadAttention selfAttn, FeedForward ff, Norm norm1, Norm second, Norm norm2) {
        if (c.normFirst()) throw new IllegalArgumentException("a second attention norm goes with post-norm layers");
        this.config = c;
        this.selfAttn = selfAttn;
        this.ff = ff;
        this.norm1 = norm1;
        this.norm2 = norm2;
        this.postAttn = null;
        this.postFf = null;
        this.second = second;
    }

    public LayerConfig config() {
        return config;
    }

    public MultiheadAttention selfAttn() {
        return selfAttn;
    }

    /** src {@code (B, L, E)}; {@code masks} apply to the self-attention. */
    public Node forward(Forward f, Node x, Masks masks) {
        return forward(f, x, h -> selfAttn.forward(f, h, h, h, masks));
    }

    /**
     * The layer with its self-attention block given as a function of the (normalised, for pre-norm) input: used by
     * incremental decoding, whose attention reads a key/value cache.
     */
    public Node forward(Forward f, Node x, UnaryOperator<Node> selfAttention) {
        GraphBuilder g = f.g;
        if (config.normFirst()) { // norm1 null: the identity (ModernBERT's first layer)
            Node a = selfAttention.apply(norm1 == null ? x : norm1.forward(f, x));
            x = g.add(x, postAttn == null ? a : postAttn.forward(f, a));
            Node y = ff.forward(f, norm2.forward(f, x));
            return g.add(x, postFf == null ? y : postFf.forward(f, y));
        }
        Node a = norm1.forward(f, g.add(x, selfAttention.apply(x)));
        x = second == null ? a : second.forward(f, g.add(x, a));
        return norm2.forward(f, g.add(x, ff.forward(f, x)));
    }
}
