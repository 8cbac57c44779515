package io.attn.graph;

/**
 * The masks applied to attention scores {@code (B, H, L, S)} before the softmax, with PyTorch's conventions.
 *
 * <ul>
 *   <li>{@code causal}: query {@code i} may not see key {@code j > i}, i.e. the mask {@code triu(ones(L,S), 1)}
 *       (top-left aligned, as {@code is_causal=True} in {@code scaled_dot_product_attention}).
 *   <li>{@code attnMask}: an extra input of shape {@code (L, S)} or {@code (B|1, H|1, L, S)}; or, of kind {@link
 *       MaskKind#RELATIVE}, a bias by relative position of shape {@code (H|1, L + S - 1)}: element {@code [h, j - i + L
 *       - 1]} is added to the score of query {@code i}, key {@code j} (MPNet's and T5's relative position bias).
 *   <li>{@code keyPadding}: an extra input of shape {@code (B, S)}; BOOL: non-zero marks padding keys; ADDITIVE: added
 *       to the scores of key {@code s} in every row of batch item {@code b}.
 *   <li>{@code segments} (ATTENTION only): a ragged batch. The {@code L = S} positions of each batch item hold sequences
 *       of these lengths one after another; a query sees only the keys of its own sequence (a block-diagonal mask), and
 *       {@code causal} applies within each sequence. This replaces padding: sequences of different lengths run in one
 *       op without padded positions, and each sequence's result is what it would be alone. No other mask goes with it
 *       but a {@link MaskKind#RELATIVE} bias (its offsets {@code j - i} within a sequence are those of the whole).
 *   <li>{@code windowLeft}, {@code windowRight}: a sliding window. Query {@code i} sees only keys {@code j} with
 *       {@code i - windowLeft <= j <= i + windowRight}; {@link #UNBOUNDED} (-1) leaves that side open. It is a rule,
 *       not a mask array: ATTENTION skips the key tiles outside it, so work and memory stay {@code O(L x window)}
 *       (SOFTMAX applies it to the scores it is given). It combines with causal (which caps the right side at 0), with
 *       either mask input, and with a ragged batch (the window then counts within each sequence). ModernBERT's
 *       local layers are {@code window(w / 2, w / 2)} for {@code local_attention = w} (transformers: {@code |i - j| <=
 *       w / 2}); Mistral's and Qwen2's {@code sliding_window = w} is causal with {@code window(w - 1, 0)} (transformers:
 *       {@code i - w < j <= i}).
 * </ul>
 *
 * Extra inputs follow the op's own inputs in this order: attention mask, then key-padding mask. A key is masked for a
 * query when its score ends up {@code -inf} (a BOOL mask, the causal rule, or an additive {@code -inf}). A query row
 * whose keys are all masked yields all-zero weights (and a zero output), where PyTorch's math path yields NaN; the same
 * holds for an unmasked softmax row that is all {@code -inf}.
 */
public record MaskSpec(
        boolean causal,
        MaskKind attnMask,
        MaskKind keyPadding,
        java.util.List<Integer> segments,
        int windowLeft,
        int windowRight) {
    public static final MaskSpec NONE = new MaskSpec(false, MaskKind.NONE, MaskKind.NONE);
    public static final MaskSpec CAUSAL = new MaskSpec(true, MaskKind.NONE, MaskKind.NONE);

    /** A window side that is not bounded. */
    public static final int UNBOUNDED = -1;

    public MaskSpec {
        if (attnMask == null || keyPadding == null) throw new IllegalArgumentException("mask kinds must not be null");
        if (keyPadding == MaskKind.RELATIVE)
            throw new IllegalArgumentException("a key-padding mask is BOOL or ADDITIVE, not RELATIVE");
        if (windowLeft < UNBOUNDED || windowRight < UNBOUNDED)
            throw new IllegalArgumentException(
                    "window sides must be >= 0 (or UNBOUNDED, -1), got left " + windowLeft + ", right " + windowRight);
        if (segments != null) {
            segments = java.util.List.copyOf(segments);
            if (segments.isEmpty()) throw new IllegalArgumentException("a ragged batch needs at least one sequence");
            for (int n : segments)
                if (n <= 0) throw new IllegalArgumentException("sequence lengths must be positive, got " + segments);
            if ((attnMask != MaskKind.NONE && attnMask != MaskKind.RELATIVE) || keyPadding != MaskKind.NONE)
                throw new IllegalArgumentException(
                        "a ragged batch (segments) takes no attention or padding mask but a relative bias");
        }
    }

    /** Masks of a batch of equal-length sequences (no segments, no window). */
    public MaskSpec(boolean causal, MaskKind attnMask, MaskKind keyPadding) {
        this(causal, attnMask, keyPadding, null);
    }

    /** Masks with segments (or null) and no window. */
    public MaskSpec(boolean causal, MaskKind attnMask, MaskKind keyPadding, java.util.List<Integer> segments) {
        this(causal, attnMask, keyPadding, segments, UNBOUNDED, UNBOUNDED);
    }

    /**
     * These masks with a sliding window: query {@code i} sees keys {@code i - left <= j <= i + right} ({@link
     * #UNBOUNDED} for an open side).
     */
    public MaskSpec window(int left, int right) {
        return new MaskSpec(causal, attnMask, keyPadding, segments, left, right);
    }

    /** Whether a sliding window bounds either side. */
    public boolean windowed() {
        return windowLeft != UNBOUNDED || windowRight != UNBOUNDED;
    }

    /**
     * The window's left side as a count of keys, {@code Integer.MAX_VALUE / 2} when unbounded (so that {@code i - left}
     * cannot overflow).
     */
    public int left() {
        return windowLeft == UNBOUNDED ? Integer.MAX_VALUE / 2 : windowLeft;
    }

    /** The window's right side with causal applied: 0 under causal, else as {@link #left}. */
    public int right() {
        int r = windowRight == UNBOUNDED ? Integer.MAX_VALUE / 2 : windowRight;
        return causal ? 0 : r;
    }

    /** A ragged batch: sequences of {@code lengths} one after another, causal within each when asked. */
    public static MaskSpec segments(boolean causal, int... lengths) {
        java.util.List<Integer> l = new java.util.ArrayList<>(lengths.length);
        for (int n : lengths) l.add(n);
        return new MaskSpec(causal, MaskKind.NONE, MaskKind.NONE, l);
    }

    /** These masks with a {@link MaskKind#RELATIVE} bias as the attention mask (which must be absent so far). */
    public MaskSpec relative() {
        if (attnMask != MaskKind.NONE)
            throw new IllegalArgumentException("an attention mask is already set: " + attnMask);
        return new MaskSpec(causal, MaskKind.RELATIVE, keyPadding, segments, windowLeft, windowRight);
    }

    /** Whether the attention mask is a bias by relative position ({@link MaskKind#RELATIVE}). */
    public boolean relativeBias() {
        return attnMask == MaskKind.RELATIVE;
    }

    /** Whether this is a ragged batch ({@link #segments} given). */
    public boolean segmented() {
        return segments != null;
    }

    /** The sequence lengths as an array (a ragged batch only). */
    public int[] segmentLengths() {
        return segments.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The total length of the sequences (a ragged batch only). */
    public int segmentsTotal() {
        int t = 0;
        for (int n : segments) t += n;
        return t;
    }

    /** Number of extra mask inputs this spec needs. */
    public int extraInputs() {
        return (attnMask != MaskKind.NONE ? 1 : 0) + (keyPadding != MaskKind.NONE ? 1 : 0);
    }

    public boolean any() {
        return causal || attnMask != MaskKind.NONE || keyPadding != MaskKind.NONE || segments != null || windowed();
    }
}
