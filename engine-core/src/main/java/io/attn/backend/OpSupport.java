package io.attn.backend;

import io.attn.graph.Node;

/**
 * What a backend computes, declared without a device: why it cannot compute a node, or null when it can. A backend's
 * {@link Backend#supports} answers from its declaration, and its provider hands the same one out ({@link
 * BackendProvider#support}), so the op x backend table ({@code attn parity --support}, {@code docs/ops.md}) is
 * generated from the code on any host, a GPU's backend included.
 */
@FunctionalInterface
public interface OpSupport {
    /** Why {@code node} (its op, params, shapes and dtypes) cannot be computed, in a few words; null when it can. */
    String unsupported(Node node);
}
