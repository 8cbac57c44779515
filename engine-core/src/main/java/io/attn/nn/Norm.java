package io.attn.nn;

import io.attn.graph.Node;

/** A normalisation block over the last dimension: {@link LayerNorm} (the encoders') or {@link RmsNorm} (decoders'). */
public sealed interface Norm permits LayerNorm, RmsNorm {
    Node forward(Forward f, Node x);
}
