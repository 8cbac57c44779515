package io.attn.nn;

import io.attn.graph.Node;

/** The position-wise feed-forward block of a transformer layer: {@code linear2(act(linear1(x)))}. */
record FeedForward(Linear linear1, Linear linear2, Activation activation) {
    /** The activations the engine computes: ReLU, GELU (exact, erf form) and GELU's tanh approximation. */
    enum Activation {
        RELU,
        GELU,
        GELU_TANH
    }

    static FeedForward load(StateDict sd, String prefix, LayerConfig c) {
        return new FeedForward(
                Linear.load(sd, prefix + "linear1.", c.dModel(), c.dimFeedforward(), c.bias()),
                Linear.load(sd, prefix + "linear2.", c.dimFeedforward(), c.dModel(), c.bias()),
                c.activation().equals("gelu") ? Activation.GELU : Activation.RELU);
    }

    Node forward(Forward f, Node x) {
        Node h =
                switch (activation) {
                    case RELU -> linear1.forward(f, x, true);
                    case GELU -> f.g.gelu(linear1.forward(f, x), false);
                    case GELU_TANH -> f.g.gelu(linear1.forward(f, x), true);
                };
        return linear2.forward(f, h);
    }
}
