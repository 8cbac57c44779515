package io.attn.reference.layers;

import io.attn.tensor.Tensor;

/**
 * A mask tensor and how to read it: boolean (stored as float, non-zero = masked out) or additive (added to the scaled
 * scores). A null {@code Mask} means no mask.
 */
public record Mask(Tensor tensor, boolean isBool) {
    public Mask {
        if (tensor == null) throw new IllegalArgumentException("mask tensor is null; pass a null Mask instead");
    }

    /** A boolean mask (non-zero = masked out), or null when {@code t} is null. */
    public static Mask bool(Tensor t) {
        return t == null ? null : new Mask(t, true);
    }

    /** An additive float mask, or null when {@code t} is null. */
    public static Mask additive(Tensor t) {
        return t == null ? null : new Mask(t, false);
    }
}
