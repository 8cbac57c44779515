package io.attn.graph;

/**
 * The masks applied to attention scores {@code (B, H, L, S)} before the softmax, with PyTorch's conventions.
 *
 * <ul>
 *   <li>{@code causal}: query {@code i} may not see key {@code j > i}, i.e. the mask {@code triu(ones(L,S), 1)}
 *       (top-left aligned, as {@code is_causal=True} in {@code scaled_dot_product_attention}).
 *   <li>{@code attnMask}: an extra input of shape {@code (L, S)} or {@code (B|1, H|1, L, S)}.
 *   <li>{@code keyPadding}: an extra input of shape {@code (B, S)}; true / non-zero marks padding keys.
 * </ul>
 *
 * Extra inputs follow the op's own inputs in this order: attention mask, then key-padding mask. A query row whose keys
 * are all masked yields all-zero weights (and a zero output), where PyTorch's math path yields NaN.
 */
public record MaskSpec(boolean causal, MaskKind attnMask, MaskKind keyPadding) {
    public static final MaskSpec NONE = new MaskSpec(false, MaskKind.NONE, MaskKind.NONE);
    public static final MaskSpec CAUSAL = new MaskSpec(true, MaskKind.NONE, MaskKind.NONE);

    public MaskSpec {
        if (attnMask == null || keyPadding == null) throw new IllegalArgumentException("mask kinds must not be null");
    }

    /** Number of extra mask inputs this spec needs. */
    public int extraInputs() {
        return (attnMask != MaskKind.NONE ? 1 : 0) + (keyPadding != MaskKind.NONE ? 1 : 0);
    }

    public boolean any() {
        return causal || attnMask != MaskKind.NONE || keyPadding != MaskKind.NONE;
    }
}
