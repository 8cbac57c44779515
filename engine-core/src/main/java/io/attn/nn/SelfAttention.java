package io.attn.nn;

import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;

/**
 * The tutorials' single-head {@code SelfAttention(embed_size)} (seed 001): {@code query}, {@code key}, {@code value}
 * are {@code nn.Linear(E, E)}; {@code softmax(Q K^T / sqrt(E)) V} over the keys (the last dim: the tutorial's {@code
 * dim=0} is its bug), no output projection. State: {@code query.*}, {@code key.*}, {@code value.*}.
 */
public final class SelfAttention {
    private final int embedSize;
    private final Linear query, key, value;

    public SelfAttention(StateDict sd, String prefix, int embedSize) {
        this.embedSize = embedSize;
        query = Linear.load(sd, prefix + "query.", embedSize, embedSize, true);
        key = Linear.load(sd, prefix + "key.", embedSize, embedSize, true);
        value = Linear.load(sd, prefix + "value.", embedSize, embedSize, true);
    }

    /** x {@code (B, L, E)} to {@code (B, L, E)}; weights recorded under {@code "self_attn"} when asked for. */
    public Node forward(Forward f, Node x, Masks masks) {
        GraphBuilder g = f.g;
        Node q = query.forwardHeads(f, x, 1);
        Node k = key.forwardHeads(f, x, 1);
        Node v = value.forwardHeads(f, x, 1);
        float scale = (float) (1.0 / Math.sqrt(embedSize));
        Node o = ScaledDotProductAttention.forward(f, "self_attn", q, k, v, masks, scale);
        return g.mergeHeads(o);
    }
}
