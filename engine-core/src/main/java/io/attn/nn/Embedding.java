package io.attn.nn;

import io.attn.graph.Node;
import io.attn.tensor.Tensor;

/** {@code torch.nn.Embedding(V, E)}: token ids to rows of {@code weight (V, E)}. State: {@code weight}. */
public record Embedding(String name, Tensor weight) {
    public static Embedding load(StateDict sd, String prefix, int vocab, int dim) {
        return new Embedding(prefix + "weight", sd.take(prefix + "weight", vocab, dim));
    }

    /** ids {@code (B, L)} (integral values as float) to {@code (B, L, E)}. */
    public Node forward(Forward f, Node ids) {
        return f.g.embedding(ids, f.g.constant(name, weight));
    }
}
