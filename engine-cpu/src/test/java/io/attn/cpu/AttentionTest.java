package io.attn.cpu;

import static io.attn.cpu.Support.assertClose;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The CPU's fused flash-style ATTENTION on the shapes its own kernels turn on (64-key tiles, 6-row groups, query
 * blocks per thread count, the lazy running max, short sequences padded to vector chunks), judged by the reference's
 * softmax(QK^T scale + masks) V ({@link Support#reference}); the shapes every backend must get right are the parity
 * suite's ({@code io.attn.parity.ParityCases}).
 */
class AttentionTest {
    private final Random r = new Random(7);

    /** A 0/1 mask with roughly {@code p} of its entries set. */
    private Tensor boolMask(double p, int... dims) {
        Tensor t = Tensor.zeros(dims);
        for (int i = 0; i < t.size(); i++) t.data()[i] = r.nextDouble() < p ? 1f : 0f;
        return t;
    }

    /** An additive mask: small values, about {@code p} of them -inf. */
    private Tensor additiveMask(double p, int... dims) {
        Tensor t = Tensor.zeros(dims);
        for (int i = 0; i < t.size(); i++)
            t.data()[i] = r.nextDouble() < p ? Float.NEGATIVE_INFINITY : (float) r.nextGaussian();
        return t;
    }

    private float[] check(int b, int h, int l, int s, int d, int dv, MaskSpec spec, Tensor mask, Tensor pad) {
        Tensor q = Support.tensor(r, b, h, l, d), k = Support.tensor(r, b, h, s, d), v = Support.tensor(r, b, h, s, dv);
        GraphBuilder g = new GraphBuilder();
        Map<String, Tensor> in = new HashMap<>(Map.of("q", q, "k", k, "v", v));
        Node m = null, kp = null;
        if (mask != null) {
            m = g.input("mask", mask.shape());
            in.put("mask", mask);
        }
        if (pad != null) {
            kp = g.input("pad", pad.shape());
            in.put("pad", pad);
        }
        float scale = (float) (1 / Math.sqrt(d));
        Node out = g.attention(
                g.input("q", q.shape()), g.input("k", k.shape()), g.input("v", v.shape()), scale, spec, m, kp);
        Graph graph = g.build(out);
        float[] got = Support.run(2, graph, in).get(0).data();
        String what = "attention B=" + b + " H=" + h + " L=" + l + " S=" + s + " D=" + d + " Dv=" + dv + " " + spec;
        assertClose(got, Support.reference(graph, in), what);
        return got;
    }

    @Test
    void noMaskAllHeadDims() {
        for (int d : new int[] {1, 8, 16, 48, 64, 65}) { // multiples of 16: full key tiles transposed in registers
            check(2, 3, 5, 7, d, d, MaskSpec.NONE, null, null);
            check(1, 2, 70, 130, d, d, MaskSpec.NONE, null, null); // several query blocks and key tiles, partial ones
        }
        check(2, 2, 33, 17, 16, 5, MaskSpec.NONE, null, null); // Dv != D
        // one row past the last group of 6 takes the general path (a decoding step: L = 1); two or more run padded
        check(2, 2, 1, 130, 64, 64, MaskSpec.NONE, null, null);
        check(1, 2, 13, 130, 64, 64, MaskSpec.NONE, null, null);
        check(1, 2, 14, 130, 64, 64, MaskSpec.NONE, null, null);
        // last groups of 3 and 5 rows: with 2-row tiles (16 registers) a pair holding one query row and one padding
        // row is computed, pairs of padding only are skipped
        check(1, 2, 15, 130, 64, 64, MaskSpec.NONE, null, null);
        check(1, 2, 17, 130, 32, 32, MaskSpec.NONE, null, null);
        check(3, 3, 150, 40, 8, 8, MaskSpec.NONE, null, null); // enough tasks for one block per (batch, head)
        check(1, 1, 300, 40, 8, 8, MaskSpec.NONE, null, null); // 24-query blocks
    }

    @Test
    void sequencesShorterThanOneKeyTile() {
        // a sentence: fewer keys than one 64-key tile takes the fast kernels on its keys rounded up to chunks (4
        // vectors with 16 registers, 2 with 32: up to 32 keys on the 6 x 2-vector score kernel at 512 bits), the
        // padded scores at -inf, at any head size (P.V on 6 x 4 vectors where dv is whole 4-vector chunks, 32 on AVX2
        // and 64 on AVX-512; with 32 registers a last pair of vectors on 6 x 2: 32 and 96 at 512 bits, 16 and 48 at
        // 256; else on 4-row tiles with vector and scalar tails: 40)
        for (int d : new int[] {16, 32, 40, 64, 96})
            for (int s : new int[] {1, 5, 25, 31, 32, 33, 63}) {
                check(2, 3, s, s, d, d, MaskSpec.NONE, null, null); // L = S: last groups of every size
                check(1, 2, 13, s, d, d, MaskSpec.NONE, null, null);
            }
    }

    @Test
    void lastKeyTileShorterThanATile() {
        // a sequence longer than one 64-key tile whose length is not a multiple of it: its last tile takes the fast
        // kernels on its keys rounded up to chunks, as a short sequence does (65: 1 key left, 96: half a tile, 127:
        // 63), after whole tiles that set the rows' running max
        for (int d : new int[] {16, 32, 40, 64})
            for (int s : new int[] {65, 66, 80, 95, 96, 97, 127, 200}) {
                check(1, 2, s, s, d, d, MaskSpec.NONE, null, null);
                check(1, 2, 13, s, d, d, MaskSpec.NONE, null, null);
            }
        check(1, 2, 40, 100, 32, 48, MaskSpec.NONE, null, null); // Dv != D
    }

    @Test
    void lastKeyTileOfOutlyingScores() {
        // the last, short tile's keys make scores far above the running max of the whole tiles (the lazy test fails
        // and the group rescales), far below it (the padded keys' raw score 0 would be above every real one), or -inf
        // (1e20 * -1e20): the padded keys get weight 0 in every case
        for (int d : new int[] {32, 64})
            for (float f : new float[] {40f, -40f, Float.NaN}) {
                Tensor q = Support.tensor(r, 1, 2, 18, d), k = Support.tensor(r, 1, 2, 90, d);
                Tensor v = Support.tensor(r, 1, 2, 90, d);
                for (int h = 0; h < 2; h++)
                    for (int j = 64; j < 90; j++)
                        for (int dd = 0; dd < d; dd++) {
                            int i = (h * 90 + j) * d + dd;
                            if (Float.isNaN(f)) k.data()[i] = dd == 0 ? -1e20f : 0f;
                            else k.data()[i] = f < 0 ? -Math.abs(k.data()[i]) * -f : k.data()[i] * f;
                        }
                if (Float.isNaN(f)) for (int i = 0; i < q.size(); i += d) q.data()[i] = 1e20f;
                else if (f < 0) for (int i = 0; i < q.size(); i++) q.data()[i] = Math.abs(q.data()[i]);
                checkUnmasked(q, k, v, "last tile x" + f + ", D=" + d);
            }
    }

    @Test
    void slidingWindowsCutTilesForSomeRows() {
        // a window cuts key tiles for some rows of a group (ModernBERT's local layers: 64 keys either side): those
        // groups run the fast kernels with the keys outside each row's window at -inf, each row its own softmax step;
        // windows narrower and wider than a tile, one-sided, lopsided, and sequences with a short last tile
        int[][] windows = {{64, 64}, {5, 7}, {0, 0}, {100, 3}, {3, 100}, {63, 1}, {130, 130}};
        for (int[] wd : windows)
            for (int d : new int[] {32, 64})
                for (int l : new int[] {66, 150, 300}) {
                    MaskSpec spec = MaskSpec.NONE.window(wd[0], wd[1]);
                    check(1, 2, l, l, d, d, spec, null, null);
                }
        check(2, 3, 97, 97, 40, 40, MaskSpec.NONE.window(64, 64), null, null); // P.V on the 4-row tiles
        check(1, 2, 200, 200, 64, 32, MaskSpec.NONE.window(20, 64), null, null); // Dv != D
    }

    @Test
    void causalDiagonalTilesOnTheFastKernels() {
        // causal attention is a window with right = 0: a diagonal tile's groups take the fast kernels with each row's
        // later keys at -inf (a decoder's short text is one diagonal tile), at head sizes that are and are not whole
        // 4-vector chunks, L = S and L < S, grouped K/V heads
        for (int d : new int[] {32, 40, 64, 128})
            for (int s : new int[] {2, 5, 13, 33, 63, 64, 65, 100, 200}) {
                check(1, 2, s, s, d, d, MaskSpec.CAUSAL, null, null);
                if (s > 13) check(1, 2, 13, s, d, d, MaskSpec.CAUSAL, null, null);
            }
        Tensor q = Support.tensor(r, 1, 2, 150, 64), k = Support.tensor(r, 1, 2, 150, 64);
        Tensor v = Support.tensor(r, 1, 2, 150, 64);
        // outlying scores on the diagonal: keys 70..99 40x larger (the lazy test fails), keys 120..129 give -inf for
        // the even rows (1e20 * -1e20), whose earlier keys are finite
        for (int h = 0; h < 2; h++) {
            for (int j = 70; j < 100; j++) for (int dd = 0; dd < 64; dd++) k.data()[(h * 150 + j) * 64 + dd] *= 40f;
            for (int j = 120; j < 130; j++) k.data()[(h * 150 + j) * 64] = -1e20f;
            for (int i = 0; i < 150; i += 2) q.data()[(h * 150 + i) * 64] = 1e20f;
        }
        float[] one = attention(1, q, k, v, 0.125f, MaskSpec.CAUSAL);
        assertClose(one, reference(q, k, v, 0.125f, MaskSpec.CAUSAL), "causal, outlying scores");
        assertArrayEquals(one, attention(3, q, k, v, 0.125f, MaskSpec.CAUSAL), "causal, 1 and 3 threads");
    }

    @Test
    void slidingWindowResultsDoNotDependOnTheThreadCount() {
        // blocks (and so the tiles cut at a block's last row's window) depend on the thread count: the results must
        // not, bitwise
        for (int[] wd : new int[][] {{64, 64}, {10, 10}, {40, 0}}) {
            Tensor q = Support.tensor(r, 1, 4, 400, 64), k = Support.tensor(r, 1, 4, 400, 64);
            Tensor v = Support.tensor(r, 1, 4, 400, 64);
            MaskSpec spec = MaskSpec.NONE.window(wd[0], wd[1]);
            float[] one = attention(1, q, k, v, 0.125f, spec);
            for (int t : new int[] {2, 3, 8})
                assertArrayEquals(
                        one,
                        attention(t, q, k, v, 0.125f, spec),
                        "window " + wd[0] + "/" + wd[1] + ", " + t + " threads");
            assertClose(one, reference(q, k, v, 0.125f, spec), "window " + wd[0] + "/" + wd[1]);
        }
    }

    @Test
    void slidingWindowOfOutlyingScores() {
        // keys 100..139 make scores far above the others (the running max jumps past the lazy margin in a tile that a
        // window cuts for some rows), then keys 200..239 make -inf (1e20 * -1e20) for rows that also see finite ones
        Tensor q = Support.tensor(r, 1, 2, 300, 64), k = Support.tensor(r, 1, 2, 300, 64);
        Tensor v = Support.tensor(r, 1, 2, 300, 64);
        for (int h = 0; h < 2; h++) {
            for (int j = 100; j < 140; j++) for (int dd = 0; dd < 64; dd++) k.data()[(h * 300 + j) * 64 + dd] *= 40f;
            for (int j = 200; j < 240; j++) k.data()[(h * 300 + j) * 64] = -1e20f;
            for (int i = 0; i < 300; i++) q.data()[(h * 300 + i) * 64] = i % 2 == 0 ? 1e20f : 1f;
        }
        for (int[] wd : new int[][] {{64, 64}, {7, 30}}) {
            MaskSpec spec = MaskSpec.NONE.window(wd[0], wd[1]);
            assertClose(
                    attention(2, q, k, v, 0.125f, spec),
                    reference(q, k, v, 0.125f, spec),
                    "outlying scores, window " + wd[0] + "/" + wd[1]);
        }
    }

    @Test
    void shortSequenceOfVeryNegativeScores() {
        // every score far below 0 (base-2 units in the thousands): the padded keys, whose raw scores would be 0, must
        // not take part in the max (p would then underflow to 0 for every real key and the row sum with it). Head dims
        // 32 and 64: P.V on the 6 x 2 and the 6 x 4 kernels at 512 bits
        for (int d : new int[] {32, 64}) {
            Tensor q = Support.tensor(r, 1, 2, 12, d), k = Support.tensor(r, 1, 2, 25, d);
            Tensor v = Support.tensor(r, 1, 2, 25, d);
            for (int i = 0; i < q.size(); i++) q.data()[i] = 3f;
            for (int i = 0; i < k.size(); i++) k.data()[i] = -5f - (i % 7);
            checkUnmasked(q, k, v, "short sequence, very negative scores, D=" + d);
        }
    }

    @Test
    void shortSequenceOfMinusInfinityScores() {
        // every score of a short sequence overflows to -inf (1e20 * -1e20): the row has no finite max, so the group
        // takes the clamping per-row way, which must still give the padded keys no weight (the row is the mean of the
        // real values, as on the general path and for long sequences)
        for (int d : new int[] {32, 64})
            for (int s : new int[] {5, 25}) {
                Tensor q = Support.tensor(r, 1, 1, 8, d), k = Support.tensor(r, 1, 1, s, d);
                Tensor v = Support.tensor(r, 1, 1, s, d);
                java.util.Arrays.fill(q.data(), 1e20f);
                java.util.Arrays.fill(k.data(), -1e20f);
                checkUnmasked(q, k, v, "short sequence of -inf scores, S=" + s + " D=" + d);
            }
    }

    @Test
    void runningMaxJumpsBetweenKeyTiles() {
        // 8 full 64-key tiles; the keys of tiles 4 and 5 are 40x larger, so their scores exceed the running max by far
        // more than the fast path's lazy-max margin (2^16): those tiles must rescale, the others keep the running max
        Tensor q = Support.tensor(r, 1, 4, 256, 64),
                k = Support.tensor(r, 1, 4, 512, 64),
                v = Support.tensor(r, 1, 4, 512, 64);
        for (int h = 0; h < 4; h++)
            for (int j = 256; j < 384; j++) for (int dd = 0; dd < 64; dd++) k.data()[(h * 512 + j) * 64 + dd] *= 40f;
        checkUnmasked(q, k, v, "max jumps by > 16");
    }

    @Test
    void lazyTestFailsForSomeRowsOfAGroup() {
        // In each group of six query rows, the odd rows get 40x larger queries, the even rows zero queries (all
        // scores 0). The key tile 2 is 40x larger too: the odd rows jump past the lazy margin there and force the
        // whole group off the fast path, while the even rows must still be right when they take the per-row way.
        Tensor q = Support.tensor(r, 1, 2, 64, 64),
                k = Support.tensor(r, 1, 2, 256, 64),
                v = Support.tensor(r, 1, 2, 256, 64);
        for (int h = 0; h < 2; h++) {
            for (int i = 0; i < 64; i++)
                for (int dd = 0; dd < 64; dd++) q.data()[(h * 64 + i) * 64 + dd] *= i % 2 == 0 ? 0f : 40f;
            for (int j = 128; j < 192; j++) for (int dd = 0; dd < 64; dd++) k.data()[(h * 256 + j) * 64 + dd] *= 40f;
        }
        checkUnmasked(q, k, v, "mixed lazy groups");
    }

    /** Attention of q, k, v with no mask inputs. */
    private static Graph graph(Tensor q, Tensor k, Tensor v, float scale, MaskSpec spec) {
        GraphBuilder g = new GraphBuilder();
        return g.build(g.attention(
                g.input("q", q.shape()), g.input("k", k.shape()), g.input("v", v.shape()), scale, spec, null, null));
    }

    /** Fused attention of q, k, v (no mask inputs) computed on {@code threads} threads. */
    private static float[] attention(int threads, Tensor q, Tensor k, Tensor v, float scale, MaskSpec spec) {
        return Support.run(threads, graph(q, k, v, scale, spec), Map.of("q", q, "k", k, "v", v))
                .get(0)
                .data();
    }

    /** The reference's attention of q, k, v (no mask inputs). */
    private static double[] reference(Tensor q, Tensor k, Tensor v, float scale, MaskSpec spec) {
        return Support.reference(graph(q, k, v, scale, spec), Map.of("q", q, "k", k, "v", v));
    }

    /** Unmasked attention with scale 1/8 on 2 threads against the double reference. */
    private static void checkUnmasked(Tensor q, Tensor k, Tensor v, String what) {
        float[] got = attention(2, q, k, v, 0.125f, MaskSpec.NONE);
        assertClose(got, reference(q, k, v, 0.125f, MaskSpec.NONE), what);
    }

    @Test
    void firstTileOfMinusInfinityScoresStaysFinite() {
        // keys 0..63 give scores of -inf in float (1e20 * -1e20 overflows), keys 64..127 huge finite ones: the group
        // has no running max after its first tile and must not take the lazy path with it (2^(-inf - -inf) = NaN)
        Tensor q = Support.tensor(r, 1, 1, 8, 64),
                k = Support.tensor(r, 1, 1, 128, 64),
                v = Support.tensor(r, 1, 1, 128, 64);
        java.util.Arrays.fill(q.data(), 1e20f);
        java.util.Arrays.fill(k.data(), 0, 64 * 64, -1e20f);
        checkUnmasked(q, k, v, "first tile all -inf");
    }

    @Test
    void laterTileOfMinusInfinityScoresGetsZeroWeight() {
        // keys 64..127 make scores of -inf (1e20 * -1e20 overflows) in a tile where every row already has a finite
        // running max from tile 0, so the tile takes the lazy fast path: those keys must get weight 0 (2^-inf = 0,
        // not NaN; a mask-free exponential tried in session 4 has no -inf case and had to be kept away from them)
        Tensor q = Support.tensor(r, 1, 1, 120, 64),
                k = Support.tensor(r, 1, 1, 128, 64),
                v = Support.tensor(r, 1, 1, 128, 64);
        for (int i = 0; i < 120; i++) q.data()[i * 64] = 1e20f;
        for (int j = 64; j < 128; j++) k.data()[j * 64] = -1e20f;
        checkUnmasked(q, k, v, "later tile all -inf");
    }

    @Test
    void causalResultsDoNotDependOnTheThreadCount() {
        // L = S = 256 on one (batch, head): 48-query blocks on 1 thread, 24 on 2, so the diagonal tiles are cut
        // differently. A NaN value row under the causal mask must reach the same rows either way, and none of the
        // groups of 6 rows before it (PyTorch's 0 * NaN would reach every row; ours keeps a group's keys to its rows)
        Tensor q = Support.tensor(r, 1, 1, 256, 64),
                k = Support.tensor(r, 1, 1, 256, 64),
                v = Support.tensor(r, 1, 1, 256, 64);
        java.util.Arrays.fill(v.data(), 42 * 64, 43 * 64, Float.NaN);
        float[] one = attention(1, q, k, v, 0.125f, MaskSpec.CAUSAL),
                two = attention(2, q, k, v, 0.125f, MaskSpec.CAUSAL);
        org.junit.jupiter.api.Assertions.assertArrayEquals(one, two);
        for (int i = 0; i < 42 * 64; i++) assertTrue(Float.isFinite(one[i]), "row " + i / 64 + " sees no NaN key");
        assertTrue(Float.isNaN(one[42 * 64]), "row 42 sees its NaN key");
    }

    @Test
    void largeBlocksDoNotDependOnTheThreadCount() {
        // L = S = 512 on one (batch, head): 96-query blocks on 1 thread, which make the sequential key pass, and 48 on
        // 2, which do not. Nothing a row computes may depend on that (a per-block choice of exponential did once)
        Tensor q = Support.tensor(r, 1, 1, 512, 64),
                k = Support.tensor(r, 1, 1, 512, 64),
                v = Support.tensor(r, 1, 1, 512, 64);
        for (MaskSpec spec : new MaskSpec[] {MaskSpec.NONE, MaskSpec.CAUSAL})
            org.junit.jupiter.api.Assertions.assertArrayEquals(
                    attention(1, q, k, v, 0.125f, spec), attention(2, q, k, v, 0.125f, spec), spec.toString());
    }

    @Test
    void paddedLastGroupDoesNotDependOnTheThreadCount() {
        // L = 262 is not a multiple of the 6-row group: the last 4 rows run the fast kernels padded with zero query
        // rows. One (batch, head): 48-query blocks on 1 thread, 24 on 2; the padded group is the same either way.
        Tensor q = Support.tensor(r, 1, 1, 262, 64),
                k = Support.tensor(r, 1, 1, 200, 64),
                v = Support.tensor(r, 1, 1, 200, 64);
        float[] one = attention(1, q, k, v, 0.125f, MaskSpec.NONE), two = attention(2, q, k, v, 0.125f, MaskSpec.NONE);
        org.junit.jupiter.api.Assertions.assertArrayEquals(one, two);
        assertClose(one, reference(q, k, v, 0.125f, MaskSpec.NONE), "padded last group");
    }

    @Test
    void oneRowLastGroupDoesNotDependOnTheThreadCount() {
        // L = 25 = 4 x 6 + 1 on 8 (batch, head) pairs: one 25-row block on 1 thread, 24 + 1 rows on 3, so the last row
        // is a one-row group of a longer block, or a block of its own (a decoding step's shape); its scores must be
        // computed alike (a one-row block once took its own dot products)
        Tensor q = Support.tensor(r, 2, 4, 25, 64),
                k = Support.tensor(r, 2, 4, 25, 64),
                v = Support.tensor(r, 2, 4, 25, 64);
        for (MaskSpec spec : new MaskSpec[] {MaskSpec.NONE, MaskSpec.CAUSAL}) {
            float[] one = attention(1, q, k, v, 0.125f, spec), three = attention(3, q, k, v, 0.125f, spec);
            org.junit.jupiter.api.Assertions.assertArrayEquals(one, three, spec.toString());
            assertClose(one, reference(q, k, v, 0.125f, spec), "one-row last group, " + spec);
        }
    }

    @Test
    void causal() {
        for (int d : new int[] {1, 8, 64, 65}) {
            check(2, 2, 70, 130, d, d, MaskSpec.CAUSAL, null, null); // L < S
            check(2, 2, 130, 70, d, d, MaskSpec.CAUSAL, null, null); // L > S: late rows see every key
        }
        // 768-query blocks over 64-key tiles: the rows above a tile's first key are skipped, diagonal rows take the
        // general path, the rows below it the fast one
        check(1, 4, 520, 520, 64, 64, MaskSpec.CAUSAL, null, null);
    }

    @Test
    void boolAttnMasks() {
        MaskSpec spec = new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE);
        check(2, 3, 37, 70, 8, 8, spec, boolMask(0.3, 37, 70), null);
        check(2, 3, 37, 70, 64, 64, spec, boolMask(0.3, 2, 1, 37, 70), null);
        check(2, 3, 37, 70, 65, 65, spec, boolMask(0.3, 1, 3, 37, 70), null);
        check(2, 3, 37, 70, 8, 8, spec, boolMask(0.3, 2, 3, 37, 70), null);
    }

    @Test
    void additiveMaskWithNegativeInfinity() {
        MaskSpec spec = new MaskSpec(false, MaskKind.ADDITIVE, MaskKind.NONE);
        check(2, 3, 37, 70, 64, 64, spec, additiveMask(0.3, 37, 70), null);
        check(2, 3, 37, 70, 8, 8, spec, additiveMask(0.3, 2, 3, 37, 70), null);
    }

    @Test
    void keyPadding() {
        check(3, 2, 20, 70, 64, 64, new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL), null, boolMask(0.3, 3, 70));
        check(
                3,
                2,
                20,
                70,
                8,
                8,
                new MaskSpec(false, MaskKind.NONE, MaskKind.ADDITIVE),
                null,
                additiveMask(0.3, 3, 70));
    }

    @Test
    void combined() {
        check(
                2,
                3,
                70,
                90,
                65,
                65,
                new MaskSpec(true, MaskKind.BOOL, MaskKind.BOOL),
                boolMask(0.2, 2, 1, 70, 90),
                boolMask(0.2, 2, 90));
        check(
                2,
                3,
                70,
                90,
                64,
                64,
                new MaskSpec(true, MaskKind.ADDITIVE, MaskKind.BOOL),
                additiveMask(0.2, 70, 90),
                boolMask(0.2, 2, 90));
        // finite additive padding on top of keys the bool mask removed: they must stay removed (a past bug)
        check(
                1,
                2,
                70,
                90,
                8,
                8,
                new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE),
                boolMask(0.3, 70, 90),
                additiveMask(0.0, 1, 90));
        check( // 256-query blocks
                3,
                3,
                300,
                70,
                8,
                8,
                new MaskSpec(true, MaskKind.ADDITIVE, MaskKind.BOOL),
                additiveMask(0.2, 300, 70),
                boolMask(0.2, 3, 70));
        check( // 128-query blocks
                2,
                3,
                150,
                90,
                8,
                8,
                new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE),
                boolMask(0.2, 150, 90),
                additiveMask(0.2, 2, 90));
    }

    /**
     * A decoding step's key padding: left padding, then visible keys, then cache rows not yet written, hidden too
     * ({@code visible[b]} keys of {@code s} from the start, the first {@code left[b]} hidden).
     */
    private static Tensor stepPadding(MaskKind kind, int s, int[] left, int[] visible) {
        Tensor t = Tensor.zeros(left.length, s);
        float hide = kind == MaskKind.BOOL ? 1f : Float.NEGATIVE_INFINITY;
        for (int b = 0; b < left.length; b++)
            for (int j = 0; j < s; j++) if (j < left[b] || j >= visible[b]) t.set(hide, b, j);
        return t;
    }

    @Test
    void decodingStepsSeeOnlyTheRowsInUse() {
        // one query row against a cache of 1024 rows, of which 517, 1000, 64 and 1 are in use (1 past a tile edge,
        // mid-tile, exactly one tile, one key), head sizes on the vector paths (64), a scalar tail (65 / 70) and short
        // (8); bool and additive padding; with and without an attention mask on top
        int[] left = {0, 3, 0, 0}, visible = {517, 1000, 64, 1};
        for (MaskKind kind : new MaskKind[] {MaskKind.BOOL, MaskKind.ADDITIVE})
            for (int[] dims : new int[][] {{64, 64}, {65, 70}, {8, 8}}) {
                Tensor pad = stepPadding(kind, 1024, left, visible);
                check(4, 3, 1, 1024, dims[0], dims[1], new MaskSpec(false, MaskKind.NONE, kind), null, pad);
                check(
                        4,
                        3,
                        1,
                        1024,
                        dims[0],
                        dims[1],
                        new MaskSpec(false, MaskKind.ADDITIVE, kind),
                        additiveMask(0.1, 1, 1024),
                        pad);
            }
        // 2-5 rows (the padded fast group) and 7 (a group of 6, then one row) under the same padding
        for (int l : new int[] {2, 5, 7})
            check(
                    4,
                    2,
                    l,
                    300,
                    64,
                    64,
                    new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL),
                    null,
                    stepPadding(MaskKind.BOOL, 300, new int[] {0, 2, 0, 0}, new int[] {130, 300, 64, 1}));
        // a causal prefill whose last block is one row
        check(
                2,
                2,
                13,
                13,
                64,
                64,
                new MaskSpec(true, MaskKind.NONE, MaskKind.BOOL),
                null,
                stepPadding(MaskKind.BOOL, 13, new int[] {0, 4}, new int[] {13, 13}));
    }

    @Test
    void keysPastTheLastVisibleOneAreNotRead() {
        // the cost of a decoding step follows the rows in use: a NaN in keys and values past the last visible key
        // (a cache row not yet written) would reach the output through 0 * NaN if they were read
        int b = 2, h = 2, s = 700, d = 64;
        Tensor q = Support.tensor(r, b, h, 1, d), k = Support.tensor(r, b, h, s, d), v = Support.tensor(r, b, h, s, d);
        Tensor pad = stepPadding(MaskKind.BOOL, s, new int[] {0, 5}, new int[] {300, 641});
        GraphBuilder g = new GraphBuilder();
        Node out = g.attention(
                g.input("q", q.shape()),
                g.input("k", k.shape()),
                g.input("v", v.shape()),
                0.125f,
                new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL),
                null,
                g.input("pad", pad.shape()));
        Graph graph = g.build(out);
        float[] finite = Support.run(2, graph, Map.of("q", q, "k", k, "v", v, "pad", pad))
                .get(0)
                .data();
        for (int bb = 0; bb < b; bb++)
            for (int hh = 0; hh < h; hh++)
                for (int j = bb == 0 ? 300 : 641; j < s; j++)
                    for (int c = 0; c < d; c++) {
                        k.set(Float.NaN, bb, hh, j, c);
                        v.set(Float.NaN, bb, hh, j, c);
                    }
        float[] withNaN = Support.run(2, graph, Map.of("q", q, "k", k, "v", v, "pad", pad))
                .get(0)
                .data();
        assertArrayEquals(finite, withNaN);
        for (float x : finite) assertTrue(Float.isFinite(x));
    }

    @Test
    void fullyMaskedRowsGiveZeros() {
        int l = 40, s = 70, dv = 8;
        Tensor mask = boolMask(0.2, l, s);
        for (int j = 0; j < s; j++) {
            mask.set(1f, 3, j); // query 3 sees nothing
            mask.set(1f, 35, j); // nor does query 35 (second query block)
        }
        Tensor pad = boolMask(0.1, 2, s);
        for (int j = 0; j < s; j++) pad.set(1f, 1, j); // batch 1: every key is padding
        float[] got = check(2, 2, l, s, dv, dv, new MaskSpec(false, MaskKind.BOOL, MaskKind.BOOL), mask, pad);
        for (int h = 0; h < 2; h++)
            for (int c = 0; c < dv; c++) {
                assertEquals(0f, got[((0 * 2 + h) * l + 3) * dv + c]);
                assertEquals(0f, got[((0 * 2 + h) * l + 35) * dv + c]);
                for (int i = 0; i < l; i++) assertEquals(0f, got[((2 + h) * l + i) * dv + c]);
            }
    }
}
