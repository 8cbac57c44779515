package io.attn.parity;

import io.attn.engine.Precision;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.tensor.Tensor;
import java.util.Map;

/**
 * One parity check: a graph whose single output is the op under test, computed from INPUT / CONSTANT leaves, either
 * directly or through a short chain of other ops that a backend may fuse with it (a GEMM with its bias, activation and
 * residual, the attention scores with their softmax: the harness runs what the backend compiles); the per-call inputs
 * drawn from {@code seed}; and the largest relative error ({@code ||got - ref||_2 / ||ref||_2}) allowed against the
 * double-precision reference, with the reason for that bound. {@code reduced} holds the case's own bounds at reduced
 * precisions (bf16, fp16, ...) where it has tighter ones than {@link ParityTarget#precisionBound}; a precision it does
 * not name gets that general bound.
 */
public record ParityCase(
        String name,
        Op op,
        Graph graph,
        Map<String, Tensor> inputs,
        long seed,
        double bound,
        String boundReason,
        Map<Precision, Double> reduced) {
    public ParityCase {
        inputs = Map.copyOf(inputs);
        reduced = Map.copyOf(reduced);
        if (graph.outputs().size() != 1 || graph.outputs().get(0).op() != op)
            throw new IllegalArgumentException(
                    "case " + name + ": the graph's single output must be the " + op + " node");
        if (!(bound >= 0)) throw new IllegalArgumentException("case " + name + ": bad bound " + bound);
        for (var e : reduced.entrySet())
            if (e.getKey() == Precision.FP32 || !(e.getValue() >= bound))
                throw new IllegalArgumentException(
                        "case " + name + ": bad " + e.getKey() + " bound " + e.getValue() + " (fp32: " + bound + ")");
    }

    /** A case with no bounds of its own at reduced precisions. */
    public ParityCase(
            String name, Op op, Graph graph, Map<String, Tensor> inputs, long seed, double bound, String boundReason) {
        this(name, op, graph, inputs, seed, bound, boundReason, Map.of());
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
