package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * Finds the epsilon of a LayerNorm from its named weight: the {@code epsilon} of a {@code LayerNormalization} node, or
 * in the decomposed form {@code (x - mean) / Sqrt(ReduceMean((x - mean)^2) + eps) * weight + bias} the constant added
 * to the variance. Stateless.
 */
final class LayerNorms {
    /** How many nodes back from the Mul by the weight the variance's Add may be. */
    private static final int SEARCH = 16;

    private LayerNorms() {}

    /** The epsilon of the LayerNorm named {@code prefix} (weight {@code prefix.weight}, bias {@code prefix.bias}). */
    static float epsilon(Graph g, String prefix) {
        String weight = prefix + ".weight";
        String bias = prefix + ".bias";
        for (NodeProto n : g.consumers(weight)) {
            if (Graph.is(n, "LayerNormalization")
                    && n.getInputCount() >= 2
                    && Graph.input(n, 1).equals(weight)) {
                if (n.getInputCount() < 3 || !Graph.input(n, 2).equals(bias))
                    throw g.bad(bias + " is not the bias of the LayerNormalization that " + weight + " scales");
                return Graph.floatAttribute(n, "epsilon", 1e-5f);
            }
            if (Graph.is(n, "Mul") && n.getInputCount() == 2) {
                OptionalDouble eps = varianceEpsilon(g, Graph.otherInput(n, weight));
                if (eps.isEmpty()) continue;
                boolean biased = g.consumers(Graph.output(n)).stream()
                        .anyMatch(a -> Graph.is(a, "Add") && a.getInputList().contains(bias));
                if (!biased) throw g.bad(bias + " is not added after the Mul by " + weight);
                return (float) eps.getAsDouble();
            }
        }
        throw g.bad(weight + " does not scale a LayerNormalization or a LayerNorm pattern"
                + " (Sqrt of ReduceMean of the squares plus a constant epsilon)");
    }

    /** Walks back from the normalized value to the {@code Add(ReduceMean(..), eps)} under the Sqrt. */
    private static OptionalDouble varianceEpsilon(Graph g, String normalized) {
        Deque<String> todo = new ArrayDeque<>();
        Set<String> seen = new HashSet<>();
        todo.add(normalized);
        while (!todo.isEmpty() && seen.size() < SEARCH) {
            String t = todo.poll();
            if (!seen.add(t)) continue;
            NodeProto p = g.producer(t).orElse(null);
            if (p == null) continue;
            if (Graph.is(p, "Add") && p.getInputCount() == 2) {
                for (int i = 0; i < 2; i++) {
                    boolean fromMean = g.producer(Graph.input(p, 1 - i))
                            .filter(r -> Graph.is(r, "ReduceMean"))
                            .isPresent();
                    OptionalDouble eps = g.scalar(Graph.input(p, i));
                    if (fromMean && eps.isPresent()) return eps;
                }
            }
            todo.addAll(p.getInputList());
        }
        return OptionalDouble.empty();
    }
}
