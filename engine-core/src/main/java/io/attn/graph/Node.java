package io.attn.graph;

import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import java.util.List;

/**
 * One value in a {@link Graph}: the op that computes it, its parameters, its inputs and its shape. Nodes are
 * immutable; {@code id} is the node's index in its graph (its position in topological order).
 */
public record Node(int id, Op op, OpParams params, List<Node> inputs, Shape shape, DType dtype) {
    public Node {
        inputs = List.copyOf(inputs);
    }

    public Node input(int i) {
        return inputs.get(i);
    }

    /** Typed access to the parameters, e.g. {@code node.params(OpParams.MatMul.class)}. */
    public <P extends OpParams> P params(Class<P> type) {
        return type.cast(params);
    }

    public boolean isLeaf() {
        return op == Op.INPUT || op == Op.CONSTANT;
    }

    @Override
    public String toString() {
        return "%" + id + " " + op + shape;
    }

    // identity semantics: two nodes are equal only if they are the same node
    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }
}
