package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds a layer's attention head count from how its scores are scaled: {@code Div} by sqrt(head size), {@code Mul} by
 * 1/sqrt(head size), or q and k each multiplied by head size^-0.25 (newer exporters); any of these, combined, give
 * 1/sqrt(head size). Where the head split is a Reshape to a shape whose last two entries are constants (H, D), they
 * must agree. Stateless.
 */
final class AttentionHeads {
    /** How many nodes a path from q or k to the scores, or from the scores to the Softmax, may have. */
    private static final int STEPS = 12;

    private AttentionHeads() {}

    /** The path from q or k to the scores MatMul, with the constant factors on it and the Reshapes it goes through. */
    private record Path(NodeProto end, double factor, boolean scaled, List<NodeProto> reshapes) {}

    static int count(Graph g, String layer, Linear query, Linear key, int hidden) {
        Path q = toScores(g, layer, "query", query.output());
        Path k = toScores(g, layer, "key", key.output());
        if (q.end() != k.end()) throw g.bad(layer + "attention: the query and key do not meet in one MatMul");
        Path s = toSoftmax(g, layer, Graph.output(q.end()));
        if (!q.scaled() && !k.scaled() && !s.scaled())
            throw g.bad(layer + "attention: the scores are not scaled by a constant (a Div by sqrt(head size),"
                    + " a Mul by 1/sqrt(head size), or q and k each times head size^-0.25)");
        double factor = q.factor() * k.factor() * s.factor();
        double headSize = 1 / (factor * factor);
        long d = Math.round(headSize);
        if (d < 1 || Math.abs(headSize - d) > 1e-3 * d || hidden % d != 0)
            throw g.bad(layer + "attention: the scores are scaled by " + (float) factor + ", so the head size is "
                    + (float) headSize + ", not a whole divisor of the hidden size " + hidden);
        int heads = (int) (hidden / d);
        List<NodeProto> reshapes = new ArrayList<>(q.reshapes());
        reshapes.addAll(k.reshapes());
        for (NodeProto r : reshapes) {
            Optional<long[]> split = headSplit(g, Graph.input(r, 1));
            if (split.isEmpty()) continue;
            long h = split.get()[0];
            long w = split.get()[1];
            if ((h > 0 && h != heads) || (w > 0 && w != d))
                throw g.bad(layer + "attention: the scores are scaled for " + heads + " heads of " + d
                        + " but the heads are split " + h + " x " + w + " (Reshape '" + r.getName() + "')");
        }
        return heads;
    }

    private static Path toScores(Graph g, String layer, String what, String start) {
        String t = start;
        double factor = 1;
        boolean scaled = false;
        List<NodeProto> reshapes = new ArrayList<>();
        for (int step = 0; step < STEPS; step++) {
            NodeProto n = next(g, layer, what, t);
            switch (Graph.op(n)) {
                case "MatMul" -> {
                    return new Path(n, factor, scaled, reshapes);
                }
                case "Reshape" -> reshapes.add(n);
                case "Transpose", "Squeeze", "Unsqueeze", "Identity", "Cast" -> {}
                case "Mul", "Div" -> {
                    factor *= scale(g, layer, what, n, t);
                    scaled = true;
                }
                default ->
                    throw g.bad(layer + "attention: the " + what + " meets a " + Graph.op(n)
                            + " node before the scores MatMul");
            }
            if (!Graph.input(n, 0).equals(t) && !Graph.is(n, "Mul"))
                throw g.bad(layer + "attention: the " + what + " is not the data input of " + Graph.op(n));
            t = Graph.output(n);
        }
        throw g.bad(layer + "attention: no scores MatMul within " + STEPS + " nodes of the " + what);
    }

    private static Path toSoftmax(Graph g, String layer, String scores) {
        String t = scores;
        double factor = 1;
        boolean scaled = false;
        for (int step = 0; step < STEPS; step++) {
            NodeProto n = next(g, layer, "scores", t);
            switch (Graph.op(n)) {
                case "Softmax" -> {
                    return new Path(n, factor, scaled, List.of());
                }
                case "Add", "Cast", "Identity" -> {} // the attention mask, or nothing
                case "Mul", "Div" -> {
                    factor *= scale(g, layer, "scores", n, t);
                    scaled = true;
                }
                default ->
                    throw g.bad(layer + "attention: the scores meet a " + Graph.op(n) + " node before the Softmax");
            }
            t = Graph.output(n);
        }
        throw g.bad(layer + "attention: no Softmax within " + STEPS + " nodes of the scores");
    }

    /** The one node that uses a tensor's values (standard operators only). */
    private static NodeProto next(Graph g, String layer, String what, String t) {
        List<NodeProto> next = g.valueConsumers(t);
        if (next.size() != 1 || next.getFirst().getOutputCount() == 0)
            throw g.bad(layer + "attention: the " + what + " goes to " + next.size()
                    + " nodes where one path to the attention scores was expected");
        return next.getFirst();
    }

    /** The factor a Mul or Div by a constant applies to {@code t}. */
    private static double scale(Graph g, String layer, String what, NodeProto n, String t) {
        String other = Graph.otherInput(n, t);
        boolean divides = Graph.is(n, "Div");
        if (n.getInputCount() != 2
                || (divides && !Graph.input(n, 0).equals(t))
                || g.scalar(other).isEmpty())
            throw g.bad(layer + "attention: the " + what + " goes through a " + Graph.op(n)
                    + " that is not a scaling by a constant");
        double c = g.scalar(other).getAsDouble();
        return divides ? 1 / c : c;
    }

    /** The last two entries (H, D) of a 4-entry Reshape shape, where they are constants. */
    private static Optional<long[]> headSplit(Graph g, String shape) {
        Optional<long[]> constant = g.ints(shape);
        if (constant.isPresent())
            return constant.get().length == 4
                    ? Optional.of(new long[] {constant.get()[2], constant.get()[3]})
                    : Optional.empty();
        return g.producer(shape)
                .filter(c -> Graph.is(c, "Concat") && c.getInputCount() == 4)
                .flatMap(c -> g.ints(Graph.input(c, 2)).flatMap(h -> g.ints(Graph.input(c, 3))
                        .filter(w -> h.length == 1 && w.length == 1)
                        .map(w -> new long[] {h[0], w[0]})));
    }
}
