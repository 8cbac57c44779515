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
    /** The lengths of a ragged batch's sequences (rows of its (1, T, E) activations), or null. */
    int[] segments;
    /** A padded batch's boolean key-padding mask (B, L) (non-zero: padding), or null. */
    Node padding;
    /** Quantized layers quantize each row (token) on its own ({@link #perToken}). */
    boolean perToken;
    /**
     * The low-rank products {@code x A^T} made so far, by input node and A (a fused q/k/v projection's three layers
     * share one A: the product is made once).
     */
    final Map<Node, Map<io.attn.tensor.Tensor, Node>> lowRank = new java.util.IdentityHashMap<>();

    public Forward(GraphBuilder g, AttentionWeights weights) {
        this.g = g;
        this.weights = weights;
    }

    public GraphBuilder builder() {
        return g;
    }

    /** Marks the graph as a ragged batch of sequences of these lengths (quantized layers quantize each alone). */
    public void segments(int[] lengths) {
        this.segments = lengths == null ? null : lengths.clone();
    }

    /**
     * Marks the graph as a padded batch with this boolean key-padding mask {@code (B, L)} (non-zero: padding; null:
     * none): quantized layers leave the padding rows out of each sequence's range.
     */
    public void padding(Node keyPadding) {
        this.padding = keyPadding;
    }

    /**
     * Quantized layers quantize each row of their input on its own (one activation scale per token), so that a row's
     * result depends on that row only: a language model's cached step, its recomputation and any batch give each
     * token the same quantized product.
     */
    public void perToken() {
        this.perToken = true;
    }

    /**
     * The padding mask for x's rows when x is the padded batch's {@code (B, L, K)} activations and there is one
     * ({@link #padding}), else null.
     */
    Node paddingOf(Node x) {
        if (perToken || padding == null || segments != null || x.shape().rank() != 3) return null;
        return x.shape().dim(0) == padding.shape().dim(0)
                        && x.shape().dim(1) == padding.shape().dim(1)
                ? padding
                : null;
    }

    /**
     * The row groups a quantized layer quantizes on their own: each sequence of a ragged batch, else each index of
     * x's first dimension (each sequence of a padded batch, its padding rows included); null for a 2-D x.
     */
    int[] rowGroups(Node x) {
        if (perToken) {
            int rows = x.shape().size() / x.shape().dim(-1);
            int[] g = new int[rows];
            java.util.Arrays.fill(g, 1);
            return rows == 0 ? null : g;
        }
        if (segments != null) return segments;
        if (x.shape().rank() < 3) return null;
        int b = x.shape().dim(0), rows = x.shape().size() / x.shape().dim(-1) / Math.max(1, b);
        int[] g = new int[b];
        java.util.Arrays.fill(g, rows);
        return b == 0 || rows == 0 ? null : g;
    }

    /** The attention-weight nodes recorded so far, in the order the blocks ran. */
    public Map<String, Node> weightNodes() {
        return weightNodes;
    }
}
