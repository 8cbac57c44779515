package io.attn.parity;

import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.List;

/**
 * The mask set-ups every masked op (SOFTMAX over scores, ATTENTION) is checked with: no mask, causal, every attention
 * mask shape and kind, key padding, combinations, and rows whose keys are all masked (which must give zero weights).
 */
final class MaskCases {
    private MaskCases() {}

    /** Makes a mask tensor for scores (B, H, L, S); null when the set-up has none. */
    interface Maker {
        Tensor make(CaseBuilder c, int b, int h, int l, int s);
    }

    /** One set-up: a label, the spec, and makers for the attention mask and the key-padding mask. */
    record Masking(String label, MaskSpec spec, Maker attn, Maker pad) {
        Node attnNode(CaseBuilder c, int b, int h, int l, int s) {
            return attn == null ? null : c.in("attn_mask", attn.make(c, b, h, l, s));
        }

        Node padNode(CaseBuilder c, int b, int h, int l, int s) {
            return pad == null ? null : c.in("key_padding", pad.make(c, b, h, l, s));
        }
    }

    private static MaskSpec spec(boolean causal, MaskKind attn, MaskKind pad) {
        return new MaskSpec(causal, attn, pad);
    }

    /** Key padding like a real batch: sequence b has its last (b % S) + 1 keys padded (1 = padding). */
    static Tensor tailPadding(int b, int s, float padValue) {
        Tensor t = Tensor.zeros(b, s);
        for (int i = 0; i < b; i++) for (int j = s - 1 - (i % s); j < s; j++) t.set(padValue, i, j);
        return t;
    }

    /** Bool (L, S) mask with rows 0 and L-1 fully masked, the rest random. */
    static Tensor boolWithDeadRows(CaseBuilder c, int l, int s) {
        Tensor t = c.boolT(0.3, l, s);
        for (int j = 0; j < s; j++) {
            t.set(1f, 0, j);
            t.set(1f, l - 1, j);
        }
        return t;
    }

    /**
     * Causal, an additive (1, H, L, S) mask of 0.5 with -inf, bool key padding with sequence 1 wholly padded (every
     * row of it all-masked): engine-cpu's OpsTest had it.
     */
    static final Masking CAUSAL_ADDITIVE_SEQUENCE_PADDED = new Masking(
            "all-masked rows: causal+additive(1,H,L,S)+bool padding, sequence 1 padded",
            spec(true, MaskKind.ADDITIVE, MaskKind.BOOL),
            (c, b, h, l, s) -> {
                Tensor t = c.boolT(0.3, 1, h, l, s);
                for (int i = 0; i < t.size(); i++) t.data()[i] = t.data()[i] != 0 ? Float.NEGATIVE_INFINITY : 0.5f;
                return t;
            },
            (c, b, h, l, s) -> {
                Tensor t = c.boolT(0.2, b, s);
                for (int j = 0; j < s; j++) t.set(1f, Math.min(1, b - 1), j);
                return t;
            });

    /**
     * A bool (L, S) mask with row 2 all masked, and a finite additive key padding on top: the keys the bool mask
     * removed must stay removed whatever is added to them (a past CPU bug; engine-cpu's OpsTest had it).
     */
    static final Masking BOOL_DEAD_ROW_FINITE_PADDING = new Masking(
            "all-masked rows: bool(L,S) row 2 + finite additive padding",
            spec(false, MaskKind.BOOL, MaskKind.ADDITIVE),
            (c, b, h, l, s) -> {
                Tensor t = c.boolT(0.4, l, s);
                for (int j = 0; j < s; j++) t.set(1f, Math.min(2, l - 1), j);
                return t;
            },
            (c, b, h, l, s) -> c.normalT(1.0, b, s));

    /**
     * A decoder batch padded on the left: causal, and sequence b has its first {@code 2b} keys padded (bool), so the
     * first {@code 2b} queries of it see no key at all (all-masked rows: zeros).
     */
    static final Masking CAUSAL_LEFT_PADDING = new Masking(
            "all-masked rows: causal+left key padding",
            spec(true, MaskKind.NONE, MaskKind.BOOL),
            null,
            (c, b, h, l, s) -> {
                Tensor t = Tensor.zeros(b, s);
                for (int i = 0; i < b; i++) for (int j = 0; j < Math.min(s - 1, 2 * i); j++) t.set(1f, i, j);
                return t;
            });

    /**
     * A relative position bias alone, one row of {@code L + S - 1} diagonals per head (MPNet's and T5's): normal with
     * sigma 1, the size of MPNet's trained biases.
     */
    static final Masking RELATIVE = new Masking(
            "relative(H,L+S-1)",
            spec(false, MaskKind.RELATIVE, MaskKind.NONE),
            (c, b, h, l, s) -> c.normalT(1.0, h, l + s - 1),
            null);

    static final List<Masking> ALL = List.of(
            new Masking("none", MaskSpec.NONE, null, null),
            new Masking("causal", MaskSpec.CAUSAL, null, null),
            new Masking(
                    "bool(L,S)",
                    spec(false, MaskKind.BOOL, MaskKind.NONE),
                    (c, b, h, l, s) -> c.boolT(0.3, l, s),
                    null),
            new Masking(
                    "bool(B,1,L,S)",
                    spec(false, MaskKind.BOOL, MaskKind.NONE),
                    (c, b, h, l, s) -> c.boolT(0.3, b, 1, l, s),
                    null),
            new Masking(
                    "bool(1,H,L,S)",
                    spec(false, MaskKind.BOOL, MaskKind.NONE),
                    (c, b, h, l, s) -> c.boolT(0.3, 1, h, l, s),
                    null),
            new Masking(
                    "bool(B,H,L,S)",
                    spec(false, MaskKind.BOOL, MaskKind.NONE),
                    (c, b, h, l, s) -> c.boolT(0.3, b, h, l, s),
                    null),
            new Masking(
                    "additive(L,S) with -inf",
                    spec(false, MaskKind.ADDITIVE, MaskKind.NONE),
                    (c, b, h, l, s) -> c.additiveT(0.2, l, s),
                    null),
            new Masking(
                    "additive(B,H,L,S) with -inf",
                    spec(false, MaskKind.ADDITIVE, MaskKind.NONE),
                    (c, b, h, l, s) -> c.additiveT(0.2, b, h, l, s),
                    null),
            new Masking(
                    "key padding bool",
                    spec(false, MaskKind.NONE, MaskKind.BOOL),
                    null,
                    (c, b, h, l, s) -> tailPadding(b, s, 1f)),
            new Masking(
                    "key padding additive",
                    spec(false, MaskKind.NONE, MaskKind.ADDITIVE),
                    null,
                    (c, b, h, l, s) -> tailPadding(b, s, Float.NEGATIVE_INFINITY)),
            new Masking(
                    "causal+bool(L,S)+key padding",
                    spec(true, MaskKind.BOOL, MaskKind.BOOL),
                    (c, b, h, l, s) -> c.boolT(0.2, l, s),
                    (c, b, h, l, s) -> tailPadding(b, s, 1f)),
            new Masking(
                    "causal+additive(1,H,L,S)+additive padding",
                    spec(true, MaskKind.ADDITIVE, MaskKind.ADDITIVE),
                    (c, b, h, l, s) -> c.additiveT(0.1, 1, h, l, s),
                    (c, b, h, l, s) -> tailPadding(b, s, Float.NEGATIVE_INFINITY)),
            new Masking(
                    "all-masked rows: bool(L,S)",
                    spec(false, MaskKind.BOOL, MaskKind.NONE),
                    (c, b, h, l, s) -> boolWithDeadRows(c, l, s),
                    null),
            new Masking(
                    "all-masked rows: additive row of -inf",
                    spec(false, MaskKind.ADDITIVE, MaskKind.NONE),
                    (c, b, h, l, s) -> {
                        Tensor t = c.additiveT(0.1, b, 1, l, s);
                        for (int j = 0; j < s; j++) t.set(Float.NEGATIVE_INFINITY, b - 1, 0, l / 2, j);
                        return t;
                    },
                    null),
            new Masking(
                    "all-masked rows: additive row of -inf + additive padding",
                    spec(false, MaskKind.ADDITIVE, MaskKind.ADDITIVE),
                    (c, b, h, l, s) -> {
                        Tensor t = c.additiveT(0.1, l, s);
                        for (int j = 0; j < s; j++) t.set(Float.NEGATIVE_INFINITY, 0, j);
                        return t;
                    },
                    (c, b, h, l, s) -> tailPadding(b, s, Float.NEGATIVE_INFINITY)),
            new Masking(
                    "all-masked rows: whole sequence padded",
                    spec(false, MaskKind.NONE, MaskKind.BOOL),
                    null,
                    (c, b, h, l, s) -> {
                        Tensor t = tailPadding(b, s, 1f);
                        for (int j = 0; j < s; j++) t.set(1f, 0, j);
                        return t;
                    }),
            new Masking(
                    "all-masked rows: causal+padding of key 0",
                    spec(true, MaskKind.NONE, MaskKind.BOOL),
                    null,
                    (c, b, h, l, s) -> {
                        Tensor t = Tensor.zeros(b, s);
                        for (int i = 0; i < b; i++) t.set(1f, i, 0);
                        return t;
                    }),
            // a sliding window (query i sees keys i - 2 .. i + 1) with key padding
            new Masking(
                    "window 2/1 + bool padding",
                    spec(false, MaskKind.NONE, MaskKind.BOOL).window(2, 1),
                    null,
                    (c, b, h, l, s) -> tailPadding(b, s, 1f)),
            RELATIVE,
            new Masking(
                    "causal+relative(1,L+S-1)+bool padding",
                    spec(true, MaskKind.RELATIVE, MaskKind.BOOL),
                    (c, b, h, l, s) -> c.normalT(1.0, 1, l + s - 1),
                    (c, b, h, l, s) -> tailPadding(b, s, 1f)),
            new Masking(
                    "all-masked rows: relative(H,L+S-1) with -inf diagonals",
                    spec(false, MaskKind.RELATIVE, MaskKind.NONE),
                    (c, b, h, l, s) -> relativeWithDeadDiagonals(c, h, l, s),
                    null));

    /**
     * A relative bias with -inf on some diagonals: head 0 masks every key at or after its query (the offsets {@code 0
     * .. S - 1}: query 0 sees no key, an all-masked row of zeros), the other heads the offset +1 (each query's next key)
     * only.
     */
    static Tensor relativeWithDeadDiagonals(CaseBuilder c, int h, int l, int s) {
        Tensor t = c.normalT(1.0, h, l + s - 1);
        for (int j = 0; j < s; j++) t.set(Float.NEGATIVE_INFINITY, 0, j + l - 1);
        for (int hh = 1; hh < h; hh++) t.set(Float.NEGATIVE_INFINITY, hh, l);
        return t;
    }
}
