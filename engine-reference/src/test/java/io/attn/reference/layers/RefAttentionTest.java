package io.attn.reference.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attn.reference.layers.RefAttention.AttentionResult;
import io.attn.reference.layers.RefAttention.MhaResult;
import io.attn.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Hand-worked checks of the SDPA and multi-head attention reference. Tolerances: 1e-4 where the expected value is a
 * 4-decimal hand value, 1e-12 for identities that hold exactly in real arithmetic (double rounding over a handful of
 * operations stays far below it).
 */
class RefAttentionTest {
    private static final double EXACT = 1e-12;

    @Test
    void tutorialExample() {
        // Q = K = I, V = 10 I, d_k = 2: scores I/sqrt2, w = e^{1/sqrt2} / (1 + e^{1/sqrt2}) = 0.66976...
        Tensor q = Tensor.of(new float[] {1, 0, 0, 1}, 1, 1, 2, 2);
        Tensor v = Tensor.of(new float[] {10, 0, 0, 10}, 1, 1, 2, 2);
        AttentionResult r = RefAttention.sdpa(q, q, v, null, true, false, null);
        assertArrayEquals(
                new double[] {0.6698, 0.3302, 0.3302, 0.6698}, r.weights().data(), 1e-4);
        assertArrayEquals(
                new double[] {6.6976, 3.3024, 3.3024, 6.6976}, r.output().data(), 1e-4);
        double w = Math.exp(1 / Math.sqrt(2)) / (1 + Math.exp(1 / Math.sqrt(2)));
        assertEquals(w, r.weights().get(0, 0, 0, 0), EXACT);
        assertEquals(10 * w, r.output().get(0, 0, 0, 0), EXACT);
    }

    @Test
    void mhaWithIdentityProjectionsIsSdpaOnInputs() {
        Map<String, Tensor> sd = identityMha(2);
        Tensor x = Tensor.of(new float[] {1, 0, 0, 1}, 1, 2, 2);
        Tensor v = Tensor.of(new float[] {10, 0, 0, 10}, 1, 2, 2);
        MhaResult r = RefAttention.multiheadAttention(sd, "", 2, 1, x, x, v, null, null, true, false, true, true);
        assertArrayEquals(new int[] {1, 2, 2}, r.output().shape());
        assertArrayEquals(
                new double[] {6.6976, 3.3024, 3.3024, 6.6976}, r.output().data(), 1e-4);
        assertArrayEquals(new int[] {1, 2, 2}, r.weights().shape());
        assertArrayEquals(
                new double[] {0.6698, 0.3302, 0.3302, 0.6698}, r.weights().data(), 1e-4);
        MhaResult noWeights =
                RefAttention.multiheadAttention(sd, "", 2, 1, x, x, v, null, null, true, false, false, true);
        assertNull(noWeights.weights());
    }

    @Test
    void headsTakeContiguousColumnBlocks() {
        // E = 4, H = 2, identity projections: head h is SDPA (scale 1/sqrt2) on columns [2h, 2h+2) of the inputs.
        int b = 2, l = 3, s = 4, e = 4, h = 2, d = 2;
        Tensor x = RandomStateDicts.uniform(1, -1, 1, b, l, e);
        Tensor kv = RandomStateDicts.uniform(2, -1, 1, b, s, e);
        MhaResult r = RefAttention.multiheadAttention(
                identityMha(e), "", e, h, x, kv, kv, null, null, true, false, true, false);
        AttentionResult ref = RefAttention.sdpa(split(x, h), split(kv, h), split(kv, h), null, true, false, null);
        assertArrayEquals(new int[] {b, h, l, s}, r.weights().shape());
        assertArrayEquals(ref.weights().data(), r.weights().data(), EXACT);
        for (int bi = 0; bi < b; bi++)
            for (int li = 0; li < l; li++)
                for (int c = 0; c < e; c++)
                    assertEquals(
                            ref.output().get(bi, c / d, li, c % d), r.output().get(bi, li, c), EXACT);
        // averaged weights are the mean over heads
        DTensor avg = r.averagedWeights();
        for (int bi = 0; bi < b; bi++)
            for (int li = 0; li < l; li++)
                for (int si = 0; si < s; si++)
                    assertEquals(
                            (r.weights().get(bi, 0, li, si) + r.weights().get(bi, 1, li, si)) / 2,
                            avg.get(bi, li, si),
                            EXACT);
    }

    @Test
    void causalWeightsAreLowerTriangularAndRowsSumToOne() {
        Tensor q = RandomStateDicts.uniform(3, -2, 2, 1, 2, 4, 3);
        Tensor k = RandomStateDicts.uniform(4, -2, 2, 1, 2, 4, 3);
        Tensor v = RandomStateDicts.uniform(5, -2, 2, 1, 2, 4, 3);
        AttentionResult r = RefAttention.sdpa(q, k, v, null, true, true, null);
        for (int h = 0; h < 2; h++) {
            for (int i = 0; i < 4; i++) {
                double sum = 0;
                for (int j = 0; j < 4; j++) {
                    double w = r.weights().get(0, h, i, j);
                    if (j > i) assertEquals(0.0, w, 0.0, "above the diagonal");
                    else assertEquals(true, w > 0, "visible key has weight");
                    sum += w;
                }
                assertEquals(1.0, sum, EXACT);
            }
            // query 0 only sees key 0: output row 0 is v row 0
            for (int c = 0; c < 3; c++)
                assertEquals(v.get(0, h, 0, c), r.output().get(0, h, 0, c), EXACT);
        }
        // L = 2 < S = 4: top-left aligned, query i sees keys 0..i
        Tensor q2 = RandomStateDicts.uniform(6, -2, 2, 1, 1, 2, 3);
        Tensor k2 = RandomStateDicts.uniform(7, -2, 2, 1, 1, 4, 3);
        AttentionResult r2 = RefAttention.sdpa(q2, k2, k2, null, true, true, null);
        assertEquals(1.0, r2.weights().get(0, 0, 0, 0), EXACT);
        assertEquals(0.0, r2.weights().get(0, 0, 1, 2), 0.0);
        assertEquals(0.0, r2.weights().get(0, 0, 1, 3), 0.0);
    }

    @Test
    void keyPaddingZeroesColumnsAndEqualsDroppingThoseKeys() {
        int e = 4, h = 2, l = 3, s = 4;
        Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(e, true, 11);
        Tensor x = RandomStateDicts.uniform(12, -1, 1, 2, l, e);
        Tensor kv = RandomStateDicts.uniform(13, -1, 1, 2, s, e);
        // batch 0 pads key 3; batch 1 pads keys 0 and 2
        Tensor kpm = Tensor.of(new float[] {0, 0, 0, 1, 1, 0, 1, 0}, 2, s);
        MhaResult r = RefAttention.multiheadAttention(sd, "", e, h, x, kv, kv, kpm, null, true, false, true, false);
        for (int bi = 0; bi < 2; bi++)
            for (int hi = 0; hi < h; hi++)
                for (int li = 0; li < l; li++)
                    for (int si = 0; si < s; si++)
                        if (kpm.get(bi, si) != 0) assertEquals(0.0, r.weights().get(bi, hi, li, si), 0.0);
        // padding a key must equal not having it: compare with each batch run alone on its kept keys
        int[][] kept = {{0, 1, 2}, {1, 3}};
        for (int bi = 0; bi < 2; bi++) {
            Tensor xb = x.slice0(bi, bi + 1);
            Tensor kvb = Tensor.zeros(1, kept[bi].length, e);
            for (int j = 0; j < kept[bi].length; j++)
                for (int c = 0; c < e; c++) kvb.set(kv.get(bi, kept[bi][j], c), 0, j, c);
            MhaResult alone =
                    RefAttention.multiheadAttention(sd, "", e, h, xb, kvb, kvb, null, null, true, false, true, false);
            for (int li = 0; li < l; li++)
                for (int c = 0; c < e; c++)
                    assertEquals(alone.output().get(0, li, c), r.output().get(bi, li, c), EXACT);
        }
    }

    @Test
    void fullyMaskedRowGivesZeroWeightsAndOutput() {
        Tensor q = RandomStateDicts.uniform(21, -1, 1, 1, 1, 3, 2);
        Tensor kv = RandomStateDicts.uniform(22, -1, 1, 1, 1, 3, 2);
        // row 1 masks every key; row 0 masks key 2; row 2 masks nothing
        Tensor bool = Tensor.of(new float[] {0, 0, 1, 1, 1, 1, 0, 0, 0}, 3, 3);
        AttentionResult r = RefAttention.sdpa(q, kv, kv, bool, true, false, null);
        for (int j = 0; j < 3; j++) assertEquals(0.0, r.weights().get(0, 0, 1, j), 0.0);
        for (int c = 0; c < 2; c++) assertEquals(0.0, r.output().get(0, 0, 1, c), 0.0);
        assertEquals(1.0, r.weights().get(0, 0, 0, 0) + r.weights().get(0, 0, 0, 1), EXACT);
        assertEquals(0.0, r.weights().get(0, 0, 0, 2), 0.0);
        // a float mask of -inf is the same thing
        float ninf = Float.NEGATIVE_INFINITY;
        Tensor add = Tensor.of(new float[] {0, 0, ninf, ninf, ninf, ninf, 0, 0, 0}, 3, 3);
        AttentionResult ra = RefAttention.sdpa(q, kv, kv, add, false, false, null);
        assertArrayEquals(r.weights().data(), ra.weights().data(), 0.0);
        assertArrayEquals(r.output().data(), ra.output().data(), 0.0);
        // in MHA the zero attention row is then projected: the output row is out_proj.bias
        Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(2, true, 23);
        Tensor x = RandomStateDicts.uniform(24, -1, 1, 1, 3, 2);
        Tensor kpmAll = Tensor.of(new float[] {1, 1, 1}, 1, 3);
        MhaResult m = RefAttention.multiheadAttention(sd, "", 2, 1, x, x, x, kpmAll, null, true, false, true, true);
        for (int li = 0; li < 3; li++)
            for (int c = 0; c < 2; c++) {
                assertEquals(sd.get("out_proj.bias").get(c), m.output().get(0, li, c), 0.0);
                assertEquals(0.0, m.weights().get(0, li, c), 0.0);
            }
    }

    @Test
    void floatMaskIsAddedToScores() {
        // q = 0: all scores 0; adding ln 2 to key 0 gives weights [2/3, 1/3]
        Tensor q = Tensor.zeros(1, 1, 1, 2);
        Tensor k = Tensor.of(new float[] {1, 2, 3, 4}, 1, 1, 2, 2);
        Tensor v = Tensor.of(new float[] {3, 0, 0, 3}, 1, 1, 2, 2);
        Tensor mask = Tensor.of(new float[] {(float) Math.log(2), 0}, 1, 2);
        AttentionResult r = RefAttention.sdpa(q, k, v, mask, false, false, null);
        double m = (float) Math.log(2); // the mask holds ln 2 rounded to float32
        double w0 = 1.0 / (1.0 + Math.exp(-m));
        assertEquals(w0, r.weights().get(0, 0, 0, 0), EXACT);
        assertEquals(2.0 / 3, r.weights().get(0, 0, 0, 0), 1e-7);
        assertEquals(3 * w0, r.output().get(0, 0, 0, 0), EXACT);
        assertEquals(3 * (1 - w0), r.output().get(0, 0, 0, 1), EXACT);
    }

    @Test
    void perHeadMaskIsIndexedBatchTimesHeadsPlusHead() {
        // B = 2, H = 2: mask entry b*H + h; only (b=1, h=0) masks key 1
        int e = 4, h = 2;
        Tensor x = RandomStateDicts.uniform(31, -1, 1, 2, 2, e);
        float[] m = new float[4 * 2 * 2];
        m[(1 * h + 0) * 4 + 0 * 2 + 1] = 1; // (b=1,h=0), query 0, key 1
        m[(1 * h + 0) * 4 + 1 * 2 + 1] = 1; // (b=1,h=0), query 1, key 1
        Tensor mask = Tensor.of(m, 4, 2, 2);
        MhaResult r = RefAttention.multiheadAttention(
                identityMha(e), "", e, h, x, x, x, null, mask, true, false, true, false);
        for (int bi = 0; bi < 2; bi++)
            for (int hi = 0; hi < h; hi++)
                for (int li = 0; li < 2; li++) {
                    double w = r.weights().get(bi, hi, li, 1);
                    if (bi == 1 && hi == 0) assertEquals(0.0, w, 0.0);
                    else assertEquals(true, w > 0);
                }
    }

    @Test
    void sdpaBroadcastsMaskAndHonoursScale() {
        // scale 0: uniform weights, output = mean of v rows
        Tensor q = RandomStateDicts.uniform(41, -1, 1, 1, 1, 2, 2);
        Tensor v = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 1, 1, 3, 2);
        AttentionResult r = RefAttention.sdpa(q, v, v, null, true, false, 0.0);
        assertEquals(1.0 / 3, r.weights().get(0, 0, 1, 2), EXACT);
        assertEquals(3.0, r.output().get(0, 0, 0, 0), EXACT);
        assertEquals(4.0, r.output().get(0, 0, 1, 1), EXACT);
        // a (1,H,L,S) mask broadcast over B = 2: key 0 masked everywhere
        Tensor q2 = RandomStateDicts.uniform(42, -1, 1, 2, 1, 2, 2);
        Tensor k2 = RandomStateDicts.uniform(43, -1, 1, 2, 1, 3, 2);
        Tensor mask = Tensor.of(new float[] {1, 0, 0, 1, 0, 0}, 1, 1, 2, 3);
        AttentionResult rm = RefAttention.sdpa(q2, k2, k2, mask, true, false, null);
        for (int bi = 0; bi < 2; bi++)
            for (int li = 0; li < 2; li++) assertEquals(0.0, rm.weights().get(bi, 0, li, 0), 0.0);
    }

    /** in_proj = [I; I; I], out_proj = I, zero biases. */
    static Map<String, Tensor> identityMha(int e) {
        Map<String, Tensor> sd = new HashMap<>();
        Tensor in = Tensor.zeros(3 * e, e);
        for (int p = 0; p < 3; p++) for (int i = 0; i < e; i++) in.set(1, p * e + i, i);
        Tensor out = Tensor.zeros(e, e);
        for (int i = 0; i < e; i++) out.set(1, i, i);
        sd.put("in_proj_weight", in);
        sd.put("in_proj_bias", Tensor.zeros(3 * e));
        sd.put("out_proj.weight", out);
        sd.put("out_proj.bias", Tensor.zeros(e));
        return sd;
    }

    /** (B,T,E) -> (B,H,T,E/H) by plain index arithmetic (test-local, independent of the reference's split). */
    private static Tensor split(Tensor x, int h) {
        int b = x.dim(0), t = x.dim(1), e = x.dim(2), d = e / h;
        Tensor out = Tensor.zeros(b, h, t, d);
        for (int bi = 0; bi < b; bi++)
            for (int ti = 0; ti < t; ti++) for (int c = 0; c < e; c++) out.set(x.get(bi, ti, c), bi, c / d, ti, c % d);
        return out;
    }
}
