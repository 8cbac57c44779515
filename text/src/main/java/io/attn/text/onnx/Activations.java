package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Names a layer's feed-forward activation (Hugging Face's {@code hidden_act}) from the nodes between the intermediate
 * and the output Linear: "gelu" for the Erf form (or a Gelu node), "gelu_new" for the tanh form (Tanh with the
 * constant 0.044715, or a Gelu node with approximate="tanh"), "relu" for Relu. Stateless.
 */
final class Activations {
    /** How many nodes the activation may have. */
    private static final int NODES = 32;

    private static final double TANH_CUBIC = 0.044715;

    private Activations() {}

    static String of(Graph g, String layer, Linear intermediate, Linear output) {
        if (intermediate.output().equals(output.input()))
            throw g.bad(layer + "intermediate.dense feeds output.dense with no activation between them");
        List<NodeProto> nodes = between(g, layer, intermediate.output(), output.input());
        List<String> ops = nodes.stream().map(Graph::op).toList();
        if (ops.contains("Erf")) return "gelu";
        for (NodeProto n : nodes) {
            if (Graph.is(n, "Gelu") || Graph.op(n).equals("com.microsoft:Gelu")) {
                boolean tanh = Graph.attribute(n, "approximate")
                        .map(a -> a.getS().toStringUtf8().equals("tanh"))
                        .orElse(false);
                return tanh ? "gelu_new" : "gelu";
            }
            if (Graph.op(n).equals("com.microsoft:FastGelu")) return "gelu_new";
        }
        boolean cubic = nodes.stream().flatMap(n -> n.getInputList().stream()).anyMatch(in -> g.scalar(in).stream()
                .anyMatch(c -> Math.abs(c - TANH_CUBIC) < 1e-6));
        if (ops.contains("Tanh") && cubic) return "gelu_new";
        if (ops.contains("Relu")) return "relu";
        throw g.bad(layer + "intermediate: the activation is not gelu (Erf), gelu_new (Tanh with 0.044715) or relu:"
                + " its nodes are " + ops);
    }

    /** The nodes on the paths from {@code from} forward to {@code to}, which must be reached. */
    private static List<NodeProto> between(Graph g, String layer, String from, String to) {
        List<NodeProto> nodes = new ArrayList<>();
        Set<NodeProto> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<String> reached = new HashSet<>();
        Deque<String> todo = new ArrayDeque<>();
        todo.add(from);
        reached.add(from);
        while (!todo.isEmpty()) {
            String t = todo.poll();
            if (t.equals(to)) continue;
            for (NodeProto n : g.valueConsumers(t)) {
                if (Graph.is(n, "MatMul") || Graph.is(n, "Gemm") || !seen.add(n)) continue;
                if (nodes.size() == NODES)
                    throw g.bad(layer + "intermediate.dense does not reach output.dense within " + NODES + " nodes");
                nodes.add(n);
                for (String out : n.getOutputList()) if (reached.add(out)) todo.add(out);
            }
        }
        if (!reached.contains(to)) throw g.bad(layer + "intermediate.dense does not lead to output.dense");
        return nodes;
    }
}
