package io.attn.nn;

import io.attn.graph.Node;
import io.attn.graph.OpParams;

/**
 * The position-wise feed-forward block of a transformer layer: {@code linear2(act(linear1(x)))}, or gated ({@code glu}
 * not null): {@code linear2(GLU(linear1(x)))}, linear1 giving 2F values whose halves are the gate (activated) and the
 * up projection ({@link io.attn.graph.GraphBuilder#glu}).
 */
record FeedForward(Linear linear1, Linear linear2, Activation activation, OpParams.Glu glu) {
    FeedForward(Linear linear1, Linear linear2, Activation activation) {
        this(linear1, linear2, activation, null);
    }

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
        if (glu != null) return linear2.forward(f, f.g.glu(linear1.forward(f, x), glu.act(), glu.activatedFirst()));
        Node h =
                switch (activation) {
                    case RELU -> linear1.forward(f, x, true);
                    case GELU -> f.g.gelu(linear1.forward(f, x), false);
                    case GELU_TANH -> f.g.gelu(linear1.forward(f, x), true);
                };
        return linear2.forward(f, h);
    }
}
