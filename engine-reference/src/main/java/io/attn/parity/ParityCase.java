package io.attn.parity;

import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.tensor.Tensor;
import java.util.Map;

/**
 * One parity check: a graph holding exactly one computed node (the op under test, the graph's single output) over
 * INPUT / CONSTANT leaves, the per-call inputs drawn from {@code seed}, and the largest relative error ({@code
 * ||got - ref||_2 / ||ref||_2}) allowed against the double-precision reference, with the reason for that bound.
 */
public record ParityCase(
        String name, Op op, Graph graph, Map<String, Tensor> inputs, long seed, double bound, String boundReason) {
    public ParityCase {
        inputs = Map.copyOf(inputs);
        if (graph.outputs().size() != 1 || graph.outputs().get(0).op() != op)
            throw new IllegalArgumentException(
                    "case " + name + ": the graph's single output must be the " + op + " node");
        for (Node n : graph.nodes())
            if (!n.isLeaf() && n != graph.outputs().get(0))
                throw new IllegalArgumentException("case " + name + ": more than one computed node");
        if (!(bound >= 0)) throw new IllegalArgumentException("case " + name + ": bad bound " + bound);
    }

    /** The node under test. */
    public Node node() {
        return graph.outputs().get(0);
    }

    @Override
    public String toString() {
        return name;
    }
}
