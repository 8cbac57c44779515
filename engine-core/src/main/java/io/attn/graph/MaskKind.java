package io.attn.graph;

/** How a mask tensor is read, following PyTorch: boolean {@code true} (non-zero) masks out; float masks are added. */
public enum MaskKind {
    NONE,
    /** Non-zero means "masked out" (the key gets no weight). */
    BOOL,
    /** Added to the scores before the softmax ({@code -inf} masks out). */
    ADDITIVE
}
