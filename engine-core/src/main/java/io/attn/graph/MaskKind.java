package io.attn.graph;

/**
 * How a mask tensor is read, following PyTorch: boolean {@code true} (non-zero) masks out; float masks are added. An
 * attention mask may also be a relative bias, indexed by each key's offset from its query.
 */
public enum MaskKind {
    NONE,
    /** Non-zero means "masked out" (the key gets no weight). */
    BOOL,
    /** Added to the scores before the softmax ({@code -inf} masks out). */
    ADDITIVE,
    /**
     * An additive bias by relative position (attention masks only): shape {@code (H|1, L + S - 1)}, element {@code [h,
     * j - i + L - 1]} added to the score of query {@code i} and key {@code j} of head {@code h} (a Toeplitz plane per
     * head, stored as its {@code L + S - 1} diagonals). T5's and MPNet's bucketed relative position bias, ALiBi's linear
     * one. {@code O(H x (L + S))} memory where an {@code (H, L, S)} mask would take {@code O(H x L x S)}, and it works
     * in a ragged batch (the offsets within a sequence are the same as in the whole).
     */
    RELATIVE
}
