package io.attn.reference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Hand-worked values for the reference itself: the judge is only as good as these. */
class ReferenceTest {
    static final double TIGHT = 1e-12; // double arithmetic on a handful of terms

    private static double[] run1(Graph g, Map<String, Tensor> in) {
        return Reference.run(g, in).get(0);
    }

    /**
     * erf table. erf(0.5), erf(1), erf(1.5), erf(2): Abramowitz & Stegun, Handbook of Mathematical Functions, Table
     * 7.1 (15 decimals). erf(0.1), erf(3), erf(3.5), erfc(1.5), erfc(2), erfc(3), erfc(5), erfc(6): computed with mpmath at 30 digits
     * (mpmath.erf / mpmath.erfc), rounded to 16 significant digits.
     */
    @Test
    void erfMatchesTable() {
        double[][] erf = {
            {0.0, 0.0},
            {0.1, 0.1124629160182849},
            {0.5, 0.520499877813047},
            {1.0, 0.842700792949715},
            {1.5, 0.966105146475311},
            {2.0, 0.995322265018953},
            {3.0, 0.9999779095030014},
            {3.5, 0.9999992569016277},
            {-0.5, -0.520499877813047},
            {-3.0, -0.9999779095030014}
        };
        for (double[] r : erf) assertEquals(r[1], Erf.erf(r[0]), 1e-12, "erf(" + r[0] + ")");
        double[][] erfc = {
            {1.5, 0.03389485352468927},
            {2.0, 0.004677734981047266},
            {3.0, 2.209049699858544e-05},
            {5.0, 1.537459794428035e-12},
            {6.0, 2.151973671249891e-17}
        };
        for (double[] r : erfc) assertEquals(r[1], Erf.erfc(r[0]), 1e-12 * r[1], "erfc(" + r[0] + ") relative");
        assertEquals(2.0, Erf.erfc(-6), 1e-15);
        assertEquals(1.0, Erf.erf(Double.POSITIVE_INFINITY));
        assertEquals(-1.0, Erf.erf(Double.NEGATIVE_INFINITY));
    }

    @Test
    void softmaxOfZeroAndLn2() {
        GraphBuilder g = new GraphBuilder();
        Graph gr = g.build(g.softmax(g.input("x", 1, 2)));
        double[] r = run1(gr, Map.of("x", Tensor.of(new float[] {0f, (float) Math.log(2)}, 1, 2)));
        // (float) ln 2 differs from ln 2 by < 3e-8, which moves the weights by < 1e-8
        assertArrayEquals(new double[] {1.0 / 3, 2.0 / 3}, r, 1e-8);
    }

    @Test
    void softmaxOfHugeValuesStaysFinite() {
        GraphBuilder g = new GraphBuilder();
        Graph gr = g.build(g.softmax(g.input("x", 1, 2)));
        double[] r = run1(gr, Map.of("x", Tensor.of(new float[] {3e38f, 3e38f}, 1, 2)));
        assertArrayEquals(new double[] {0.5, 0.5}, r, TIGHT);
    }

    @Test
    void layerNormOf123() {
        // mean 2, biased variance 2/3: (x - 2) / sqrt(2/3) = -sqrt(1.5), 0, sqrt(1.5)
        double s = Math.sqrt(1.5);
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 1, 3);
        Graph plain = g.build(g.layerNorm(x, null, null, 0f));
        Map<String, Tensor> in = Map.of("x", Tensor.of(new float[] {1, 2, 3}, 1, 3));
        assertArrayEquals(new double[] {-s, 0, s}, run1(plain, in), TIGHT);

        GraphBuilder g2 = new GraphBuilder();
        Node w = g2.constant("w", Tensor.of(new float[] {1, 2, 3}, 3));
        Node b = g2.constant("b", Tensor.of(new float[] {0.5f, 0.5f, 0.5f}, 3));
        Graph affine = g2.build(g2.layerNorm(g2.input("x", 1, 3), w, b, 0f));
        assertArrayEquals(new double[] {0.5 - s, 0.5, 0.5 + 3 * s}, run1(affine, in), TIGHT);
    }

    @Test
    void gelu() {
        assertEquals(0.8413447460685429, Reference.gelu(1.0, false), TIGHT); // Phi(1)
        assertEquals(0.8411919906082768, Reference.gelu(1.0, true), TIGHT); // 0.5(1 + tanh(sqrt(2/pi) 1.044715))
        assertEquals(0.0, Reference.gelu(0.0, false));
        assertEquals(-0.15865525393145707, Reference.gelu(-1.0, false), TIGHT); // -(1 - Phi(1))
        assertEquals(1e4, Reference.gelu(1e4, false));
        assertEquals(0.0, Reference.gelu(-1e4, true), 0.0);
    }

    private static double[] maskedWeights(MaskSpec spec, int l, int s, Tensor mask, Tensor pad) {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 1, 1, l, s);
        Node m = mask == null ? null : g.constant("m", mask), p = pad == null ? null : g.constant("p", pad);
        return run1(g.build(g.softmax(x, 1f, spec, m, p)), Map.of("x", Tensor.zeros(1, 1, l, s)));
    }

    @Test
    void causalMaskIsUpperTriangleTopLeftAligned() {
        double t = 1.0 / 3;
        assertArrayEquals(
                new double[] {1, 0, 0, 0.5, 0.5, 0, t, t, t}, maskedWeights(MaskSpec.CAUSAL, 3, 3, null, null), TIGHT);
        // L < S: query i still sees keys 0..i only
        assertArrayEquals(
                new double[] {1, 0, 0, 0, 0.5, 0.5, 0, 0}, maskedWeights(MaskSpec.CAUSAL, 2, 4, null, null), TIGHT);
    }

    @Test
    void boolAdditiveAndPaddingMasks() {
        MaskSpec bool = new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE);
        Tensor m = Tensor.of(new float[] {0, 1, 0, 0, 0, 0}, 2, 3);
        assertArrayEquals(
                new double[] {0.5, 0, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, maskedWeights(bool, 2, 3, m, null), TIGHT);
        MaskSpec add = new MaskSpec(false, MaskKind.ADDITIVE, MaskKind.NONE);
        Tensor a = Tensor.of(new float[] {0, (float) Math.log(2), Float.NEGATIVE_INFINITY}, 1, 3);
        assertArrayEquals(new double[] {1.0 / 3, 2.0 / 3, 0}, maskedWeights(add, 1, 3, a, null), 1e-8);
        MaskSpec pad = new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL);
        Tensor p = Tensor.of(new float[] {0, 0, 1, 1}, 1, 4);
        assertArrayEquals(new double[] {0.5, 0.5, 0, 0}, maskedWeights(pad, 1, 4, null, p), TIGHT);
    }

    @Test
    void fullyMaskedRowGivesZeroWeightsAndZeroOutput() {
        MaskSpec bool = new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE);
        Tensor m = Tensor.of(new float[] {1, 1, 0, 1}, 2, 2); // row 0: every key masked; row 1: key 0 only
        assertArrayEquals(new double[] {0, 0, 1, 0}, maskedWeights(bool, 2, 2, m, null), TIGHT);

        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, 2, 1), k = g.input("k", 1, 1, 2, 1), v = g.input("v", 1, 1, 2, 1);
        Graph gr = g.build(g.attention(q, k, v, Float.NaN, bool, g.constant("m", m), null));
        Tensor ones = Tensor.of(new float[] {1, 1}, 1, 1, 2, 1);
        Tensor vals = Tensor.of(new float[] {3, 7}, 1, 1, 2, 1);
        // row 0: zero output; row 1 sees key 0 only: output v[0] = 3
        assertArrayEquals(new double[] {0, 3}, run1(gr, Map.of("q", ones, "k", ones, "v", vals)), TIGHT);
    }

    /**
     * Grouped-query attention: with one key, each query head's output is its K/V head's value row. H = 4 query heads
     * over Hkv = 2: heads 0, 1 read K/V head 0 and heads 2, 3 read head 1 (PyTorch's repeat_interleave, {@code
     * enable_gqa=True}), not 0, 1, 0, 1 (repeat).
     */
    @Test
    void groupedQueryAttentionSharesEachKvHeadWithConsecutiveQueryHeads() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 4, 1, 1), k = g.input("k", 1, 2, 1, 1), v = g.input("v", 1, 2, 1, 1);
        Graph gr = g.build(g.attention(q, k, v, Float.NaN, MaskSpec.NONE, null, null));
        double[] r = run1(
                gr,
                Map.of(
                        "q", Tensor.of(new float[] {1, 2, 3, 4}, 1, 4, 1, 1),
                        "k", Tensor.of(new float[] {1, 1}, 1, 2, 1, 1),
                        "v", Tensor.of(new float[] {10, 20}, 1, 2, 1, 1)));
        assertArrayEquals(new double[] {10, 10, 20, 20}, r, TIGHT);
    }

    @Test
    void queryHeadsThatAreNotAMultipleOfKvHeadsAreAShapeError() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 3, 2, 8), k = g.input("k", 1, 2, 2, 8);
        RuntimeException e =
                assertThrows(RuntimeException.class, () -> g.attention(q, k, k, Float.NaN, MaskSpec.NONE, null, null));
        assertTrue(e.getMessage().contains("3 heads, which is not a multiple of k/v's 2 heads"), e.getMessage());
    }

    @Test
    void attentionMaskBroadcastsOverHeads() {
        // (1, H=2, L=1, S=2) scores zero; mask (1,1,1,2) masks key 1 in both heads
        GraphBuilder g = new GraphBuilder();
        MaskSpec bool = new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE);
        Node x = g.input("x", 1, 2, 1, 2);
        Node m = g.constant("m", Tensor.of(new float[] {0, 1}, 1, 1, 1, 2));
        double[] r = run1(g.build(g.softmax(x, 1f, bool, m, null)), Map.of("x", Tensor.zeros(1, 2, 1, 2)));
        assertArrayEquals(new double[] {1, 0, 1, 0}, r, TIGHT);
    }

    @Test
    void positionalEncoding() {
        GraphBuilder g = new GraphBuilder();
        Graph gr = g.build(g.positionalEncoding(g.input("x", 1, 2, 4), 0));
        double[] r = run1(gr, Map.of("x", Tensor.zeros(1, 2, 4)));
        // pos 0: sin 0, cos 0, ...; pos 1: sin(1), cos(1), sin(1/100), cos(1/100) since w_1 = 10000^(-2/4)
        assertArrayEquals(
                new double[] {0, 1, 0, 1, Math.sin(1), Math.cos(1), Math.sin(0.01), Math.cos(0.01)}, r, TIGHT);
        GraphBuilder g2 = new GraphBuilder();
        Graph shifted = g2.build(g2.positionalEncoding(g2.input("x", 1, 1, 4), 1));
        double[] s = run1(shifted, Map.of("x", Tensor.of(new float[] {1, 1, 1, 1}, 1, 1, 4)));
        assertArrayEquals(
                new double[] {1 + Math.sin(1), 1 + Math.cos(1), 1 + Math.sin(0.01), 1 + Math.cos(0.01)}, s, TIGHT);
    }

    @Test
    void matmulTransposesAlphaAndSharedB() {
        GraphBuilder g = new GraphBuilder();
        Node a = g.input("a", 2, 2, 2), b = g.constant("b", Tensor.of(new float[] {5, 6, 7, 8}, 2, 2));
        Graph gr = g.build(g.matmul(a, b, false, false, 2f));
        // batch 0 [[1,2],[3,4]].[[5,6],[7,8]] = [[19,22],[43,50]]; batch 1 identity; times alpha 2
        double[] r = run1(gr, Map.of("a", Tensor.of(new float[] {1, 2, 3, 4, 1, 0, 0, 1}, 2, 2, 2)));
        assertArrayEquals(new double[] {38, 44, 86, 100, 10, 12, 14, 16}, r, TIGHT);
        GraphBuilder g2 = new GraphBuilder();
        Node a2 = g2.input("a", 2, 2), b2 = g2.input("b", 2, 2);
        Graph tt = g2.build(g2.matmul(a2, b2, true, true, 1f));
        // A^T = [[1,3],[2,4]], B^T = [[5,7],[6,8]] -> [[23,31],[34,46]]
        Map<String, Tensor> in =
                Map.of("a", Tensor.of(new float[] {1, 2, 3, 4}, 2, 2), "b", Tensor.of(new float[] {5, 6, 7, 8}, 2, 2));
        assertArrayEquals(new double[] {23, 31, 34, 46}, run1(tt, in), TIGHT);
    }

    @Test
    void layoutOps() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 1, 2, 4); // (B=1, L=2, E=4), H=2, D=2
        Graph split = g.build(g.splitHeads(x, 2));
        Map<String, Tensor> in = Map.of("x", Tensor.of(new float[] {0, 1, 2, 3, 4, 5, 6, 7}, 1, 2, 4));
        // head 0: l0 [0,1], l1 [4,5]; head 1: l0 [2,3], l1 [6,7]
        assertArrayEquals(new double[] {0, 1, 4, 5, 2, 3, 6, 7}, run1(split, in), 0);
        GraphBuilder g2 = new GraphBuilder();
        Graph merge = g2.build(g2.mergeHeads(g2.input("x", 1, 2, 2, 2)));
        assertArrayEquals(
                new double[] {0, 1, 4, 5, 2, 3, 6, 7},
                run1(merge, Map.of("x", Tensor.of(new float[] {0, 1, 2, 3, 4, 5, 6, 7}, 1, 2, 2, 2))),
                0);
        GraphBuilder g3 = new GraphBuilder();
        Graph cat = g3.build(g3.concat(1, g3.input("a", 2, 1), g3.input("b", 2, 2)));
        Map<String, Tensor> ab =
                Map.of("a", Tensor.of(new float[] {1, 2}, 2, 1), "b", Tensor.of(new float[] {3, 4, 5, 6}, 2, 2));
        assertArrayEquals(new double[] {1, 3, 4, 2, 5, 6}, run1(cat, ab), 0);
        GraphBuilder g4 = new GraphBuilder();
        Graph mean = g4.build(g4.mean(g4.input("x", 1, 2, 2), 1));
        assertArrayEquals(
                new double[] {2, 3}, run1(mean, Map.of("x", Tensor.of(new float[] {1, 2, 3, 4}, 1, 2, 2))), 0);
        GraphBuilder g5 = new GraphBuilder();
        Node table = g5.constant("t", Tensor.of(new float[] {0, 1, 10, 11, 20, 21}, 3, 2));
        Graph emb = g5.build(g5.embedding(g5.input("ids", 2), table));
        assertArrayEquals(new double[] {20, 21, 0, 1}, run1(emb, Map.of("ids", Tensor.of(new float[] {2, 0}, 2))), 0);
        assertThrows(IllegalArgumentException.class, () -> run1(emb, Map.of("ids", Tensor.of(new float[] {3, 0}, 2))));
    }
}
