package io.attn.nn;

import io.attn.graph.Node;

/** The position-wise feed-forward block of a transformer layer: {@code linear2(act(linear1(x)))}. */
record FeedForward(Linear linear1, Linear linear2, boolean gelu) {
    static FeedForward load(StateDict sd, String prefix, LayerConfig c) {
        return new FeedForward(
                Linear.load(sd, prefix + "linear1.", c.dModel(), c.dimFeedforward(), c.bias()),
                Linear.load(sd, prefix + "linear2.", c.dimFeedforward(), c.dModel(), c.bias()),
                c.activation().equals("gelu"));
    }

    Node forward(Forward f, Node x) {
        Node h = gelu ? f.g.gelu(linear1.forward(f, x), false) : linear1.forward(f, x, true); // ReLU fused
        return linear2.forward(f, h);
    }
}
