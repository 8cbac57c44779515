package io.attn.nn;

import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;

/**
 * The masks for one attention block as graph nodes: an attention mask {@code (L, S)} or {@code (B|1, H|1, L, S)}
 * (bool or additive) or a relative bias {@code (H|1, L + S - 1)}, a key-padding mask {@code (B, S)} (bool or additive),
 * and the causal flag; or, for a ragged batch, the lengths of the sequences laid one after another (with a relative
 * bias or none). Null nodes mean absent.
 */
public record Masks(
        Node attnMask,
        MaskKind attnKind,
        Node keyPadding,
        MaskKind keyPaddingKind,
        boolean causal,
        int[] segments,
        int windowLeft,
        int windowRight) {
    public static final Masks NONE = new Masks(null, MaskKind.NONE, null, MaskKind.NONE, false);

    public Masks {
        if ((attnMask == null) != (attnKind == MaskKind.NONE))
            throw new IllegalArgumentException("attention mask node and kind disagree");
        if ((keyPadding == null) != (keyPaddingKind == MaskKind.NONE))
            throw new IllegalArgumentException("key-padding node and kind disagree");
    }

    public Masks(Node attnMask, MaskKind attnKind, Node keyPadding, MaskKind keyPaddingKind, boolean causal) {
        this(attnMask, attnKind, keyPadding, keyPaddingKind, causal, null);
    }

    /** Masks without a sliding window. */
    public Masks(
            Node attnMask,
            MaskKind attnKind,
            Node keyPadding,
            MaskKind keyPaddingKind,
            boolean causal,
            int[] segments) {
        this(attnMask, attnKind, keyPadding, keyPaddingKind, causal, segments, MaskSpec.UNBOUNDED, MaskSpec.UNBOUNDED);
    }

    /** These masks with a sliding window ({@link MaskSpec#window}): keys {@code i - left .. i + right} only. */
    public Masks window(int left, int right) {
        return new Masks(attnMask, attnKind, keyPadding, keyPaddingKind, causal, segments, left, right);
    }

    /**
     * These masks with a bias by relative position {@code (H|1, L + S - 1)} as the attention mask ({@link
     * MaskKind#RELATIVE}; there must be none so far). Padded or ragged batches alike.
     */
    public Masks relative(Node bias) {
        if (attnMask != null) throw new IllegalArgumentException("an attention mask is already set");
        return new Masks(
                bias, MaskKind.RELATIVE, keyPadding, keyPaddingKind, causal, segments, windowLeft, windowRight);
    }

    /** A ragged batch: sequences of {@code lengths} one after another (see {@link MaskSpec#segments}). */
    public static Masks segments(int[] lengths, boolean causal) {
        return new Masks(null, MaskKind.NONE, null, MaskKind.NONE, causal, lengths.clone());
    }

    public static Masks causal(boolean causal) {
        return causal ? new Masks(null, MaskKind.NONE, null, MaskKind.NONE, true) : NONE;
    }

    /** Only a boolean key-padding mask (may be null), and the causal flag. */
    public static Masks keyPadding(Node keyPadding, boolean causal) {
        return new Masks(null, MaskKind.NONE, keyPadding, keyPadding == null ? MaskKind.NONE : MaskKind.BOOL, causal);
    }

    public MaskSpec spec() {
        MaskSpec s = segments == null
                ? new MaskSpec(causal, attnKind, keyPaddingKind)
                : attnKind == MaskKind.RELATIVE
                        ? MaskSpec.segments(causal, segments).relative()
                        : MaskSpec.segments(causal, segments);
        return windowLeft == MaskSpec.UNBOUNDED && windowRight == MaskSpec.UNBOUNDED
                ? s
                : s.window(windowLeft, windowRight);
    }
}
