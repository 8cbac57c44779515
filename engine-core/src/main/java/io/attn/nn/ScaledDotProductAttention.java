package io.attn.nn;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;

/**
 * {@code F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)} on q {@code (B, H, L, D)}, k {@code (B,
 * H, S, D)}, v {@code (B, H, S, Dv)}, with the attention weights too when {@code f} asks for them (PyTorch's function
 * does not return them; the tutorials' {@code ScaledDotProductAttention} module does). Bool masks here mean "masked
 * out" where true, as everywhere in attn (PyTorch's SDPA reads a bool mask the other way round).
 */
public final class ScaledDotProductAttention {
    private ScaledDotProductAttention() {}

    /**
     * Returns {@code (B, H, L, Dv)}; records the weights {@code (B, H, L, S)} (or averaged over heads) under {@code
     * name} when {@code f} wants weights. {@code scale} NaN means {@code 1/sqrt(D)}.
     */
    public static Node forward(Forward f, String name, Node q, Node k, Node v, Masks masks, float scale) {
        GraphBuilder g = f.g;
        float sc = Float.isNaN(scale) ? (float) (1.0 / Math.sqrt(q.shape().dim(3))) : scale;
        if (f.weights == AttentionWeights.NONE)
            return g.attention(q, k, v, sc, masks.spec(), masks.attnMask(), masks.keyPadding());
        if (k.shape().dim(1) != q.shape().dim(1))
            throw AttnException.badInput(name + ": attention weights are not available with grouped-query attention ("
                    + q.shape().dim(1) + " query heads over " + k.shape().dim(1) + " key/value heads)");
        // PyTorch order: (q k^T) * scale, then the masks, then softmax (the weights)
        Node p = g.attentionWeights(q, k, sc, masks.spec(), masks.attnMask(), masks.keyPadding());
        f.weightNodes.put(name, f.weights == AttentionWeights.AVERAGED ? g.mean(p, 1) : p);
        return g.matmul(p, v);
    }
}
