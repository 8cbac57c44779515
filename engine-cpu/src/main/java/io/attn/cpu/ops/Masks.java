package io.attn.cpu.ops;

import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Shape;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Turns raw scores into masked, scaled scores for attention {@code (B, H, L, S)}, following {@link MaskSpec}: a masked
 * score becomes {@code -inf}; an additive mask is added after scaling ({@code -inf} there masks too), a relative bias
 * likewise (its element of the key's offset from the query). Unmasked scores are clamped to {@code [-MAX_VALUE,
 * MAX_VALUE]}, so huge finite inputs can overflow neither into {@code inf - inf = NaN} nor into a fake "fully masked"
 * row. A sliding window masks the keys outside it. Immutable; one per op call.
 */
final class Masks {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final float MAX = Float.MAX_VALUE;
    private static final float NEG_INF = Float.NEGATIVE_INFINITY;

    private final boolean causal, windowed;
    private final int left, right; // the window's sides (MaskSpec.left / right: large when unbounded)
    private final MaskKind attnKind, padKind;
    private final float[] attn, pad;
    private final int mb, mh, l, s; // attention mask dims (mb, mh are 1 when broadcast)
    private final boolean relative; // the attention mask is a bias by relative position, (mh, l + s - 1)
    private final boolean finiteBias; // ... and every element of it finite
    /** Per batch item, one past its last key that the key-padding mask leaves visible; null without that mask. */
    private final int[] keyEnd;

    /**
     * @param node the SOFTMAX or ATTENTION node
     * @param first index of the first mask input ({@code 1} for softmax, {@code 3} for attention)
     */
    Masks(MaskSpec spec, Node node, float[][] in, int first, int l, int s) {
        this.causal = spec.causal();
        this.windowed = spec.windowed();
        this.left = spec.left();
        this.right = spec.right();
        this.attnKind = spec.attnMask();
        this.padKind = spec.keyPadding();
        this.l = l;
        this.s = s;
        int next = first;
        this.relative = attnKind == MaskKind.RELATIVE;
        if (attnKind != MaskKind.NONE) {
            Shape ms = node.input(next).shape();
            attn = in[next++];
            mb = ms.rank() == 4 ? ms.dim(0) : 1;
            mh = relative ? ms.dim(0) : ms.rank() == 4 ? ms.dim(1) : 1;
        } else {
            attn = null;
            mb = mh = 1;
        }
        finiteBias = relative && finite(attn, mh * (l + s - 1));
        pad = padKind != MaskKind.NONE ? in[next] : null;
        // (B, S): B from the node's shape (a buffer may be longer than its value)
        keyEnd = pad == null
                ? null
                : keyEnds(
                        pad,
                        padKind,
                        node == null ? pad.length / s : node.input(next).shape().dim(0),
                        s);
    }

    /**
     * One past the last key of batch item {@code b} that the key-padding mask leaves visible (0 when it hides them
     * all; {@code Integer.MAX_VALUE} without a key-padding mask). Keys from there on are hidden from every query of
     * the item, whatever the other masks say: a decoding step's cache rows not yet written.
     */
    int keyEnd(int b) {
        return keyEnd == null ? Integer.MAX_VALUE : keyEnd[b];
    }

    /** {@link #keyEnd} for every batch item: a bool mask hides a key unless it is 0, an additive one where it is -inf. */
    private static int[] keyEnds(float[] pad, MaskKind kind, int batch, int s) {
        int[] end = new int[batch];
        for (int b = 0; b < end.length; b++) {
            int j = s;
            if (kind == MaskKind.BOOL) while (j > 0 && pad[b * s + j - 1] != 0f) j--;
            else while (j > 0 && pad[b * s + j - 1] == NEG_INF) j--;
            end[b] = j;
        }
        return end;
    }

    boolean causal() {
        return causal;
    }

    /** Whether a sliding window bounds the keys ({@link MaskSpec#windowed}). */
    boolean windowed() {
        return windowed;
    }

    /** The window's left side: query {@code i} sees no key {@code j < i - left} (large when unbounded). */
    int left() {
        return left;
    }

    /** The window's right side, causal included: query {@code i} sees no key {@code j > i + right}. */
    int right() {
        return right;
    }

    /** Whether there is neither an attention mask nor a key-padding mask (causal may still be set). */
    boolean noMaskInputs() {
        return attn == null && pad == null;
    }

    /**
     * Whether the only mask input is a bias by relative position ({@link MaskKind#RELATIVE}) whose elements are all
     * finite (a bias of -inf masks keys, which only {@link #apply} does).
     */
    boolean relativeOnly() {
        return finiteBias && pad == null;
    }

    private static boolean finite(float[] a, int n) {
        for (int i = 0; i < n; i++) if (!Float.isFinite(a[i])) return false;
        return true;
    }

    /**
     * Adds {@code maskScale} times the relative bias of head {@code h} to {@code row[off + c]}, {@code c in [0, n)},
     * the raw (already scaled) scores of query {@code i} against keys {@code j0 + c}: the fast path's step for a
     * {@link #relativeOnly} mask, which leaves scores unclamped as that path does (the same two roundings as {@link
     * #apply}'s). The bias of those keys lies in one run, from element {@code j0 - i + l - 1} of the head's row.
     */
    void addRelative(float[] row, int off, int n, int h, int i, int j0, float maskScale) {
        int ao = (mh == 1 ? 0 : h) * (l + s - 1) + l - 1 - i + j0;
        int c = 0;
        for (int ub = SP.loopBound(n); c < ub; c += SP.length())
            FloatVector.fromArray(SP, row, off + c)
                    .add(FloatVector.fromArray(SP, attn, ao + c).mul(maskScale))
                    .intoArray(row, off + c);
        for (; c < n; c++) row[off + c] += attn[ao + c] * maskScale;
    }

    /**
     * Rewrites {@code row[off + c]}, {@code c in [0, n)}, which holds raw scores of query {@code i} against keys {@code
     * j0 + c} of batch {@code b}, head {@code h}, into masked scaled scores.
     */
    void apply(float[] row, int off, int n, int b, int h, int i, int j0, float scale) {
        apply(row, off, n, b, h, i, j0, scale, 1f);
    }

    /**
     * {@link #apply(float[], int, int, int, int, int, int, float)} with additive mask values multiplied by {@code
     * maskScale} (attention works with scores in base-2 units: {@code log2(e)} there).
     */
    void apply(float[] row, int off, int n, int b, int h, int i, int j0, float scale, float maskScale) {
        int ao = attn == null
                ? 0
                : relative
                        ? (mh == 1 ? 0 : h) * (l + s - 1) + l - 1 - i + j0 // element j - i + l - 1 of the head's row
                        : ((((mb == 1 ? 0 : b) * mh + (mh == 1 ? 0 : h)) * l + i) * s) + j0;
        int po = b * s + j0;
        int ub = SP.loopBound(n);
        for (int c = 0; c < ub; c += SP.length())
            FloatVector.fromArray(SP, row, off + c)
                    .mul(scale)
                    .max(-MAX)
                    .min(MAX)
                    .intoArray(row, off + c);
        // each mask in a loop of its own over the row, the same operations per element: a helper taking and returning
        // one vector, called per vector, was boxed where C2 did not inline it (a steady-state allocation recording of
        // the -q MiniLM, one text per call, 2026-12-06)
        if (attn != null) maskRow(row, off, ub, attn, attnKind, ao, maskScale);
        if (pad != null) maskRow(row, off, ub, pad, padKind, po, maskScale);
        for (int c = ub; c < n; c++) {
            float v = Math.min(MAX, Math.max(-MAX, row[off + c] * scale));
            if (attn != null) v = masked(v, attn[ao + c], attnKind, maskScale);
            if (pad != null) v = masked(v, pad[po + c], padKind, maskScale);
            row[off + c] = v;
        }
        if (causal && j0 + n > i + 1) Arrays.fill(row, off + Math.max(0, i + 1 - j0), off + n, NEG_INF);
        if (windowed) { // keys before i - left and after i + right
            int before = (int) Math.min(n, Math.max(0L, (long) i - left - j0));
            if (before > 0) Arrays.fill(row, off, off + before, NEG_INF);
            long after = (long) i + right + 1 - j0;
            if (after < n) Arrays.fill(row, off + (int) Math.max(0, after), off + n, NEG_INF);
        }
    }

    /** {@code row[off + c]} masked by {@code m[mo + c]} for {@code c < n}, whole vectors. */
    private static void maskRow(float[] row, int off, int n, float[] m, MaskKind kind, int mo, float maskScale) {
        for (int c = 0; c < n; c += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, row, off + c);
            FloatVector mv = FloatVector.fromArray(SP, m, mo + c);
            if (kind == MaskKind.BOOL) v = v.blend(NEG_INF, mv.compare(VectorOperators.NE, 0f));
            else {
                // -inf in the mask or already in v (masked by the other mask) stays -inf; the clamp applies to the rest
                var gone = mv.compare(VectorOperators.EQ, NEG_INF).or(v.compare(VectorOperators.EQ, NEG_INF));
                v = v.add(mv.mul(maskScale)).max(-MAX).min(MAX).blend(NEG_INF, gone);
            }
            v.intoArray(row, off + c);
        }
    }

    private static float masked(float v, float m, MaskKind kind, float maskScale) {
        if (kind == MaskKind.BOOL) return m != 0f ? NEG_INF : v;
        return m == NEG_INF || v == NEG_INF ? NEG_INF : Math.min(MAX, Math.max(-MAX, v + m * maskScale));
    }
}
