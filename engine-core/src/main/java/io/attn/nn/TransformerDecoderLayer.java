package io.attn.nn;

import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;

/**
 * {@code torch.nn.TransformerDecoderLayer} (batch_first, eval mode). State: {@code self_attn.*}, {@code
 * multihead_attn.*} (cross-attention: queries from the decoder, keys and values from the memory), {@code linear1.*},
 * {@code linear2.*}, {@code norm1.*}, {@code norm2.*}, {@code norm3.*}.
 *
 * <pre>
 * post-norm: x = norm1(x + sa(x)); x = norm2(x + mha(x, mem)); x = norm3(x + ff(x))
 * pre-norm:  x = x + sa(norm1(x)); x = x + mha(norm2(x), mem); x = x + ff(norm3(x))
 * </pre>
 */
public final class TransformerDecoderLayer {
    private final LayerConfig config;
    private final MultiheadAttention selfAttn, crossAttn;
    private final FeedForward ff;
    private final LayerNorm norm1, norm2, norm3;

    public TransformerDecoderLayer(StateDict sd, String prefix, LayerConfig c) {
        this.config = c;
        selfAttn = new MultiheadAttention(sd, prefix + "self_attn.", c.dModel(), c.nhead(), c.bias());
        crossAttn = new MultiheadAttention(sd, prefix + "multihead_attn.", c.dModel(), c.nhead(), c.bias());
        ff = FeedForward.load(sd, prefix, c);
        norm1 = LayerNorm.load(sd, prefix + "norm1.", c.dModel(), c.layerNormEps(), c.bias());
        norm2 = LayerNorm.load(sd, prefix + "norm2.", c.dModel(), c.layerNormEps(), c.bias());
        norm3 = LayerNorm.load(sd, prefix + "norm3.", c.dModel(), c.layerNormEps(), c.bias());
    }

    public LayerConfig config() {
        return config;
    }

    /**
     * tgt {@code (B, L, E)}, memory {@code (B, S, E)}; {@code selfMasks} apply to the self-attention (usually causal),
     * {@code memoryMasks} to the cross-attention.
     */
    public Node forward(Forward f, Node x, Node memory, Masks selfMasks, Masks memoryMasks) {
        GraphBuilder g = f.g;
        if (config.normFirst()) {
            Node h = norm1.forward(f, x);
            x = g.add(x, selfAttn.forward(f, h, h, h, selfMasks));
            x = g.add(x, crossAttn.forward(f, norm2.forward(f, x), memory, memory, memoryMasks));
            return g.add(x, ff.forward(f, norm3.forward(f, x)));
        }
        x = norm1.forward(f, g.add(x, selfAttn.forward(f, x, x, x, selfMasks)));
        x = norm2.forward(f, g.add(x, crossAttn.forward(f, x, memory, memory, memoryMasks)));
        return norm3.forward(f, g.add(x, ff.forward(f, x)));
    }
}
