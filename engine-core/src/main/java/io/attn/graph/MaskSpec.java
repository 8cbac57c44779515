package io.attn.graph;

/**
 * The masks applied to attention scores {@code (B, H, L, S)} before the softmax, with PyTorch's conventions.
 *
 * <ul>
 *   <li>{@code causal}: query {@code i} may not see key {@code j > i}, i.e. the mask {@code triu(ones(L,S), 1)}
 *       (top-left aligned, as {@code is_causal=True} in {@code scaled_dot_product_attention}).
 *   <li>{@code attnMask}: an extra input of shape {@code (L, S)} or {@code (B|1, H|1, L, S)}.
 *   <li>{@code keyPadding}: an extra input of shape {@code (B, S)}; BOOL: non-zero marks padding keys; ADDITIVE: added
 *       to the scores of key {@code s} in every row of batch item {@code b}.
 * </ul>
 *
 * Extra inputs follow the op's own inputs in this order: attention mask, then key-padding mask. A key is masked for a
 * query when its score ends up {@code -inf} (a BOOL mask, the causal rule, or an additive {@code -inf}). A query row
 * whose keys are all masked yields all-zero weights (and a zero output), where PyTorch's math path yields NaN; the same
 * holds for an unmasked softmax row that is all {@code -inf}.
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
