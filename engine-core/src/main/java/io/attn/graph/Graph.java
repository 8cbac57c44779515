package io.attn.graph;

import java.util.List;
import java.util.Map;

/**
 * An immutable DAG of {@link Node}s in topological order, with named inputs and ordered outputs. Built by {@link
 * GraphBuilder}; run by {@code io.attn.exec.Executor}.
 */
public record Graph(List<Node> nodes, Map<String, Node> inputs, List<Node> outputs) {
    public Graph {
        nodes = List.copyOf(nodes);
        inputs = Map.copyOf(inputs);
        outputs = List.copyOf(outputs);
    }

    /** For each node id, the index of the last node that reads it ({@code nodes.size()} for outputs). */
    public int[] lastUse() {
        int[] last = new int[nodes.size()];
        for (Node n : nodes) for (Node in : n.inputs()) last[in.id()] = Math.max(last[in.id()], n.id());
        for (Node o : outputs) last[o.id()] = nodes.size();
        return last;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Node n : nodes) {
            sb.append(n).append(" = ").append(n.params());
            if (!n.inputs().isEmpty()) {
                sb.append(" (");
                for (int i = 0; i < n.inputs().size(); i++)
                    sb.append(i == 0 ? "%" : ", %").append(n.input(i).id());
                sb.append(')');
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
