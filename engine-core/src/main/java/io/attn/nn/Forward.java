package io.attn.nn;

import io.attn.engine.AttentionWeights;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * State of one forward-graph construction: the builder, whether attention weights are wanted (and how), and the
 * weights each attention block produced, under their state_dict prefix without the trailing dot ({@code
 * layers.0.self_attn}).
 */
public final class Forward {
    final GraphBuilder g;
    final AttentionWeights weights;
    final Map<String, Node> weightNodes = new LinkedHashMap<>();

    public Forward(GraphBuilder g, AttentionWeights weights) {
        this.g = g;
        this.weights = weights;
    }

    public GraphBuilder builder() {
        return g;
    }

    /** The attention-weight nodes recorded so far, in the order the blocks ran. */
    public Map<String, Node> weightNodes() {
        return weightNodes;
    }
}
