package io.attn.parity;

import io.attn.engine.Precision;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The parity suite: several small single-op cases for every non-leaf {@link Op} (INPUT and CONSTANT are the leaves of
 * every case). Sizes are odd on purpose (1, 3, 17, 63, 65, ~1000) so that vector tails and single-element edges run;
 * the whole suite runs in well under a second on the reference.
 *
 * <p>Error bounds (relative, {@code ||got - ref||_2 / ||ref||_2} against the double-precision reference):
 *
 * <ul>
 *   <li>{@link #FP32} = 1e-5 by default: a float32 operation rounds with relative error up to 2^-24 ~ 6e-8; a sum of
 *       up to ~1e3 terms accumulates typically ~sqrt(n) and at worst ~n of those (6e-5 worst for n = 1e3, ~2e-6
 *       typical), and the ops here chain at most a few such steps;
 *   <li>{@link #EXACT} = 0 for pure data movement (split/merge heads, concat, embedding) and relu: no arithmetic, so
 *       the values must be copied bit for bit;
 *   <li>a few documented exceptions (positional encoding at large positions, layer norm of rows with a large mean).
 * </ul>
 */
public final class ParityCases {
    private ParityCases() {}

    /** Default relative bound for float32 arithmetic. */
    public static final double FP32 = 1e-5;

    static final String FP32_WHY = "fp32: ~6e-8 rounding per op, accumulated over up to ~1e3 terms";
    /** Bound for pure data movement. */
    public static final double EXACT = 0.0;

    static final String EXACT_WHY = "pure data movement: values are copied bit for bit";

    /** Every case, grouped by op. */
    public static List<ParityCase> all() {
        List<ParityCase> all = new ArrayList<>();
        matmul(all);
        elementwise(all);
        softmax(all);
        layerNorm(all);
        gelu(all);
        silu(all);
        embeddingAndPositions(all);
        layout(all);
        attention(all);
        rmsNorm(all);
        rope(all);
        glu(all);
        qmatmul(all);
        qmatmulChains(all);
        qembedding(all);
        return List.copyOf(all);
    }

    /** The cases that test {@code op}. */
    public static List<ParityCase> of(Op op) {
        return all().stream().filter(c -> c.op() == op).toList();
    }

    private static void matmul(List<ParityCase> all) {
        // name, A dims, B dims, transA, transB, alpha
        record M(String name, int[] a, int[] b, boolean ta, boolean tb, float alpha) {}
        List<M> ms = List.of(
                new M("nn 2-D 3x5.5x7", new int[] {3, 5}, new int[] {5, 7}, false, false, 1f),
                new M("nn 1x1.1x1", new int[] {1, 1}, new int[] {1, 1}, false, false, 1f),
                new M("nn batched K=1", new int[] {2, 17, 1}, new int[] {2, 1, 3}, false, false, 1f),
                new M("nt batched (Q.K^T)", new int[] {2, 3, 17, 8}, new int[] {2, 3, 19, 8}, false, true, 1f),
                new M("tn batched", new int[] {3, 9, 17}, new int[] {3, 9, 5}, true, false, 1f),
                new M("tt batched", new int[] {2, 9, 17}, new int[] {2, 33, 9}, true, true, 1f),
                new M("nn alpha=0.125", new int[] {2, 17, 64}, new int[] {2, 64, 15}, false, false, 0.125f),
                new M("nt alpha=-1.7 M=1", new int[] {1, 1, 63}, new int[] {1, 65, 63}, false, true, -1.7f),
                new M("shared 2-D B nt (Linear)", new int[] {2, 17, 64}, new int[] {33, 64}, false, true, 1f),
                new M("shared 2-D B nn", new int[] {3, 5, 63}, new int[] {63, 65}, false, false, 1f),
                new M("shared 2-D B tn alpha=0.5", new int[] {2, 2, 7, 5}, new int[] {7, 3}, true, false, 0.5f),
                new M("shared 2-D B tt", new int[] {2, 7, 5}, new int[] {3, 7}, true, true, 1f),
                new M("nn long K=1000", new int[] {1, 3, 1000}, new int[] {1, 1000, 5}, false, false, 1f),
                // larger products (from engine-cpu's GemmTest): rows past a 96-row block, K over two 2048-deep K steps
                // and a partial one, N past a 512-column block; every GEMM kernel's tile edges show on them too
                new M("tiles nn 257x70.70x129", new int[] {257, 70}, new int[] {70, 129}, false, false, 1f),
                new M("tiles tt alpha=0.5 K=4500", new int[] {4500, 57}, new int[] {33, 4500}, true, true, 0.5f),
                new M("tiles nt alpha=2 N=600", new int[] {100, 70}, new int[] {600, 70}, false, true, 2f));
        for (M m : ms) {
            CaseBuilder c = new CaseBuilder("matmul " + m.name());
            Node a = c.normal("a", m.a());
            Node b = m.b().length == 2 ? c.constNormal("b", m.b()) : c.normal("b", m.b());
            all.add(c.done(c.g.matmul(a, b, m.ta(), m.tb(), m.alpha()), FP32, FP32_WHY));
        }
        // the fused epilogue: Linear (+ ReLU) shapes, a transposed and a batched B, edge tiles, K over one K step
        record E(String name, int[] a, int[] b, boolean ta, boolean tb, boolean bias, boolean relu) {}
        List<E> es = List.of(
                new E(
                        "linear+bias (2,17,64).(33,64)^T",
                        new int[] {2, 17, 64},
                        new int[] {33, 64},
                        false,
                        true,
                        true,
                        false),
                new E(
                        "linear+bias+relu (3,40,65).(70,65)^T",
                        new int[] {3, 40, 65},
                        new int[] {70, 65},
                        false,
                        true,
                        true,
                        true),
                new E("relu only, batched nn", new int[] {2, 9, 17}, new int[] {2, 17, 5}, false, false, false, true),
                new E("bias, tn, K=700", new int[] {700, 7}, new int[] {700, 40}, true, false, true, false),
                new E("bias+relu M=1 (Gemv path)", new int[] {1, 300}, new int[] {129, 300}, false, true, true, true));
        for (E e : es) {
            CaseBuilder c = new CaseBuilder("matmul epilogue " + e.name());
            Node a = c.normal("a", e.a());
            Node b = e.b().length == 2 ? c.constNormal("b", e.b()) : c.normal("b", e.b());
            int n = e.tb() ? e.b()[e.b().length - 2] : e.b()[e.b().length - 1];
            Node bias = e.bias() ? c.constNormal("bias", n) : null;
            Node y = c.g.matmul(a, b, e.ta(), e.tb(), 1f);
            if (bias != null) y = c.g.addBias(y, bias);
            all.add(c.done(e.relu() ? c.g.relu(y) : y, FP32, FP32_WHY));
        }
        // ... stored split into heads (a projection of multi-head attention: Linear.forwardHeads)
        // {B, L, heads, head dim}: tiny (the unpacked path), head dim 16 (a 32-column tile spans two heads), 64, odd
        for (int[] bh : new int[][] {{2, 13, 4, 20}, {3, 13, 1, 20}, {2, 100, 4, 16}, {2, 50, 2, 64}, {1, 37, 5, 7}}) {
            CaseBuilder c = new CaseBuilder(
                    "matmul epilogue linearHeads B=" + bh[0] + " L=" + bh[1] + " heads=" + bh[2] + " D=" + bh[3]);
            int e = bh[2] * bh[3];
            Node x = c.normal("x", bh[0], bh[1], 33);
            Node bias = bh[2] == 1 ? null : c.constNormal("bias", e);
            all.add(c.done(c.g.splitHeads(c.g.linear(x, c.constNormal("w", e, 33), bias), bh[2]), FP32, FP32_WHY));
        }
        // ... with a residual (x + Linear(x), as transformer layers build it)
        for (boolean bias : new boolean[] {true, false}) {
            CaseBuilder c = new CaseBuilder("matmul epilogue residual x + Linear(x), bias=" + bias);
            Node x = c.normal("x", 2, 17, 64);
            Node y = c.g.linear(x, c.constNormal("w", 64, 64), bias ? c.constNormal("bias", 64) : null);
            all.add(c.done(c.g.add(x, y), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("matmul epilogue bias+relu+residual (3,40,65).(70,65)^T");
            Node a = c.normal("a", 3, 40, 65);
            Node r = c.normal("r", 3, 40, 70);
            Node y = c.g.linear(a, c.constNormal("b", 70, 65), c.constNormal("bias", 70), true);
            all.add(c.done(c.g.add(y, r), FP32, FP32_WHY));
        }
        // ... with an addend before the activation (a task adapter's low-rank product beside shared weights,
        // nn.Linear's LoRA: the CPU adds it in the epilogue): then GELU and a residual, ReLU, or the heads layout
        for (String then : new String[] {"gelu+residual", "relu", "heads"}) {
            CaseBuilder c = new CaseBuilder("matmul epilogue linear+bias+add+" + then + " (2,33,48).(40,48)^T");
            Node x = c.normal("x", 2, 33, 48);
            Node low = c.g.linear(c.g.linear(x, c.constNormal("a", 4, 48), null), c.constNormal("b", 40, 4), null);
            Node y = c.g.add(c.g.linear(x, c.constNormal("w", 40, 48), c.constNormal("bias", 40)), low);
            Node out =
                    switch (then) {
                        case "relu" -> c.g.relu(y);
                        case "heads" -> c.g.splitHeads(y, 5);
                        default -> c.g.add(c.g.gelu(y, false), c.normal("r", 2, 33, 40));
                    };
            all.add(c.done(out, FP32, FP32_WHY));
        }
        // ... with the other activations (a backend may fuse them into the product: bias_act on CUDA)
        for (String act : new String[] {"gelu", "gelu tanh", "silu"})
            for (boolean bias : new boolean[] {true, false}) {
                CaseBuilder c = new CaseBuilder("matmul epilogue linear+" + (bias ? "bias+" : "") + act + " (2,33,48)");
                Node y = c.g.linear(
                        c.normal("x", 2, 33, 48), c.constNormal("w", 40, 48), bias ? c.constNormal("bias", 40) : null);
                Node out = act.equals("silu") ? c.g.silu(y) : c.g.gelu(y, act.equals("gelu tanh"));
                all.add(c.done(out, FP32, FP32_WHY));
            }
    }

    private static void elementwise(List<ParityCase> all) {
        for (int[] dims : new int[][] {{1}, {3, 17}, {2, 5, 63}, {1000, 1}}) {
            CaseBuilder c = new CaseBuilder("add_bias " + Arrays.toString(dims));
            Node x = c.normal("x", dims);
            all.add(c.done(c.g.addBias(x, c.constNormal("bias", dims[dims.length - 1])), FP32, FP32_WHY));
        }
        for (int[] dims : new int[][] {{1}, {1003}, {2, 3, 17}, {3, 65}}) {
            CaseBuilder c = new CaseBuilder("add " + Arrays.toString(dims));
            all.add(c.done(c.g.add(c.normal("a", dims), c.normal("b", dims)), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("add non-finite (inf+1, inf-inf, NaN+1)");
            float inf = Float.POSITIVE_INFINITY;
            Node a = c.in("a", Tensor.of(new float[] {inf, inf, Float.NaN, -inf, 1f, 2.5f, -3f}, 7));
            Node b = c.in("b", Tensor.of(new float[] {1f, -inf, 1f, -2f, inf, 0.5f, 3f}, 7));
            all.add(c.done(c.g.add(a, b), FP32, "IEEE: NaN/Inf must propagate exactly like the reference"));
        }
        float[] factors = {0.37f, -2f, 1f / 3f, -1.5f};
        int[][] scaleDims = {{1000}, {3, 17}, {1}, {3, 63}};
        for (int i = 0; i < factors.length; i++) {
            CaseBuilder c = new CaseBuilder("scale x" + factors[i] + " " + Arrays.toString(scaleDims[i]));
            all.add(c.done(c.g.scale(c.normal("x", scaleDims[i]), factors[i]), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("scale of +-inf and huge values");
            Node x = c.in(
                    "x",
                    Tensor.of(new float[] {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 3e38f, -1e-30f, 0f}, 5));
            all.add(c.done(c.g.scale(x, 4f), FP32, "x4 is exact; 3e38*4 overflows to +inf in both"));
        }
        for (int[] dims : new int[][] {{1}, {3, 17}, {1001}}) {
            CaseBuilder c = new CaseBuilder("relu " + Arrays.toString(dims));
            all.add(c.done(c.g.relu(c.normal("x", dims)), EXACT, "max(x, 0) rounds nothing"));
        }
        {
            CaseBuilder c = new CaseBuilder("relu of +-inf and NaN");
            Node x = c.in(
                    "x",
                    Tensor.of(
                            new float[] {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0f, 1e-40f, Float.NaN}, 5));
            all.add(c.done(c.g.relu(x), EXACT, "max(x, 0) rounds nothing"));
        }
    }

    private static void softmax(List<ParityCase> all) {
        // plain rows of any rank, softmax over the last dim
        for (int[] dims : new int[][] {{1, 1}, {5, 3}, {3, 17}, {2, 1000}, {65, 63}, {2, 3, 5, 1}}) {
            CaseBuilder c = new CaseBuilder("softmax rows " + Arrays.toString(dims));
            all.add(c.done(c.g.softmax(c.normal("x", dims)), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("softmax scale=0.125 (3,1000)");
            Node x = c.in("x", c.normalT(4.0, 3, 1000));
            all.add(c.done(c.g.softmax(x, 0.125f, MaskSpec.NONE, null, null), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("softmax scale=0.7 (1,1,5,65)");
            all.add(c.done(c.g.softmax(c.normal("x", 1, 1, 5, 65), 0.7f, MaskSpec.NONE, null, null), FP32, FP32_WHY));
        }
        // large magnitudes: without subtracting the row max, exp overflows (inf/inf = NaN) or underflows (0/0)
        double[][] big = {{2e4, 3}, {-2e4, 3}, {0, 1e4}};
        float[] bigScale = {1f, 0.5f, 0.25f};
        for (int i = 0; i < big.length; i++) {
            CaseBuilder c = new CaseBuilder(
                    "softmax large |x| offset " + big[i][0] + " spread " + big[i][1] + " scale " + bigScale[i]);
            Tensor t = c.normalT(big[i][1], 5, 17);
            for (int j = 0; j < t.size(); j++) t.data()[j] += (float) big[i][0];
            all.add(c.done(
                    c.g.softmax(c.in("x", t), bigScale[i], MaskSpec.NONE, null, null),
                    FP32,
                    "scale is a power of two (exact in fp32), so only exp/sum rounding remains"));
        }
        // every mask set-up on scores (B, H, L, S) with L != S, then causal on other shapes
        for (MaskCases.Masking m : MaskCases.ALL) all.add(maskedSoftmax(m, 2, 3, 5, 7));
        all.add(maskedSoftmax(MaskCases.ALL.get(1), 1, 2, 7, 4)); // causal, L > S
        all.add(maskedSoftmax(MaskCases.ALL.get(1), 2, 1, 6, 6)); // causal, L == S
        all.add(maskedSoftmax(MaskCases.ALL.get(10), 1, 1, 1, 65)); // combined masks, one query
        // the mask combinations engine-cpu's OpsTest had: a whole sequence padded under causal and additive masks, a
        // finite additive padding on top of keys a bool mask removed (they must stay removed)
        all.add(maskedSoftmax(MaskCases.CAUSAL_ADDITIVE_SEQUENCE_PADDED, 2, 3, 9, 65));
        all.add(maskedSoftmax(MaskCases.BOOL_DEAD_ROW_FINITE_PADDING, 2, 2, 6, 40));
        // the attention weights softmax(scale q k^T + masks), MATMUL then SOFTMAX (both backends fuse the pair): every
        // mask set-up, L != S; more query
        // rows than one CPU block (128) with a ragged last block; rank 3 without masks
        for (MaskCases.Masking m : MaskCases.ALL) all.add(attentionWeights(m, 2, 3, 5, 7, 16));
        all.add(attentionWeights(MaskCases.ALL.get(1), 1, 2, 150, 70, 64)); // causal
        all.add(attentionWeights(MaskCases.ALL.get(0), 1, 1, 150, 600, 8)); // no mask: S beyond one GEMM column block
        {
            CaseBuilder c = new CaseBuilder("attention weights rank 3 (2,9,16).(2,11,16)^T");
            all.add(c.done(
                    c.g.attentionWeights(
                            c.normal("q", 2, 9, 16), c.normal("k", 2, 11, 16), 0.25f, MaskSpec.NONE, null, null),
                    FP32,
                    FP32_WHY));
        }
    }

    private static ParityCase attentionWeights(MaskCases.Masking m, int b, int h, int l, int s, int d) {
        CaseBuilder c =
                new CaseBuilder("attention weights " + m.label() + " (" + b + "," + h + "," + l + "," + s + ") D=" + d);
        Node q = c.normal("q", b, h, l, d), k = c.normal("k", b, h, s, d);
        Node am = m.attnNode(c, b, h, l, s), kp = m.padNode(c, b, h, l, s);
        return c.done(c.g.attentionWeights(q, k, (float) (1 / Math.sqrt(d)), m.spec(), am, kp), FP32, FP32_WHY);
    }

    private static ParityCase maskedSoftmax(MaskCases.Masking m, int b, int h, int l, int s) {
        CaseBuilder c = new CaseBuilder("softmax " + m.label() + " (" + b + "," + h + "," + l + "," + s + ")");
        Node x = c.normal("scores", b, h, l, s);
        Node am = m.attnNode(c, b, h, l, s), kp = m.padNode(c, b, h, l, s);
        return c.done(c.g.softmax(x, 0.5f, m.spec(), am, kp), FP32, FP32_WHY);
    }

    private static void layerNorm(List<ParityCase> all) {
        record LN(String label, int[] dims, boolean w, boolean b, float eps) {}
        for (LN ln : List.of(
                new LN("w+b", new int[] {3, 17}, true, true, 1e-5f),
                new LN("w only", new int[] {2, 5, 64}, true, false, 1e-5f),
                new LN("b only", new int[] {4, 65}, false, true, 1e-6f),
                new LN("no affine", new int[] {1, 1000}, false, false, 1e-5f),
                new LN("E=1 (var 0: output is the bias)", new int[] {5, 1}, true, true, 1e-5f))) {
            CaseBuilder c = new CaseBuilder("layer_norm " + ln.label() + " " + Arrays.toString(ln.dims()));
            int e = ln.dims()[ln.dims().length - 1];
            Node x = c.normal("x", ln.dims());
            Node w = ln.w() ? c.constNormal("weight", e) : null, bias = ln.b() ? c.constNormal("bias", e) : null;
            all.add(c.done(c.g.layerNorm(x, w, bias, ln.eps()), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("layer_norm rows with mean 100 (3,65)");
            Tensor t = c.normalT(1.0, 3, 65);
            for (int j = 0; j < t.size(); j++) t.data()[j] += 100f;
            all.add(c.done(
                    c.g.layerNorm(c.in("x", t), c.constNormal("weight", 65), c.constNormal("bias", 65), 1e-5f),
                    2e-4,
                    MEAN_100_WHY));
        }
        // the same at the other widths of the vector tails (from engine-cpu's OpsTest), with and without the affine
        String[] affine = {"w+b", "w only", "no affine", "w+b"};
        int[] widths = {3, 17, 63, 1000};
        for (int i = 0; i < widths.length; i++) {
            int e = widths[i];
            CaseBuilder c = new CaseBuilder("layer_norm rows with mean 100 " + affine[i] + " (4," + e + ")");
            Tensor t = c.normalT(1.0, 4, e);
            for (int j = 0; j < t.size(); j++) t.data()[j] += 100f;
            Node w = i != 2 ? c.constNormal("weight", e) : null, bias = i % 3 == 0 ? c.constNormal("bias", e) : null;
            all.add(c.done(c.g.layerNorm(c.in("x", t), w, bias, 1e-5f), 2e-4, MEAN_100_WHY));
        }
    }

    private static final String MEAN_100_WHY =
            "fp32 mean of values ~100 errs by ~eps*sqrt(E)*100 ~ 5e-5, shifting every output; the"
                    + " one-pass E[x^2]-E[x]^2 variance errs ~100x more and fails";

    private static void gelu(List<ParityCase> all) {
        for (boolean tanh : new boolean[] {false, true}) {
            String kind = tanh ? "tanh" : "exact";
            for (int[] dims : new int[][] {{1}, {3, 65}, {1000}}) {
                CaseBuilder c = new CaseBuilder("gelu " + kind + " " + Arrays.toString(dims));
                Node x = c.in("x", c.normalT(2.0, dims));
                all.add(c.done(c.g.gelu(x, tanh), FP32, FP32_WHY));
            }
            CaseBuilder c = new CaseBuilder("gelu " + kind + " large |x|");
            float[] v = {1e4f, -1e4f, 1e3f, -1e3f, 50f, -50f, 20f, -20f, 10f, -10f, 6f, -6f, 5.5f, -5.5f, 0f, 1f, -1f};
            all.add(c.done(c.g.gelu(c.in("x", Tensor.of(v, v.length)), tanh), FP32, FP32_WHY));
            // both tails evenly (from engine-cpu's OpsTest): 1000 steps over [-12, 12], and -60, +-1e30 (x^3 overflows)
            CaseBuilder r = new CaseBuilder("gelu " + kind + " ramp [-12, 12], -60, +-1e30");
            float[] ramp = new float[1003];
            for (int i = 0; i < ramp.length; i++) ramp[i] = (float) (-12 + 24.0 * i / (ramp.length - 1));
            ramp[0] = -1e30f;
            ramp[1] = 1e30f;
            ramp[2] = -60f;
            all.add(r.done(r.g.gelu(r.in("x", Tensor.of(ramp, ramp.length)), tanh), FP32, FP32_WHY));
        }
    }

    static final String QMATMUL_WHY =
            "int8: the int32 accumulation is exact and the one float product the definition's,"
                    + " so the result is bit for bit the integer reference's";

    /**
     * QMATMUL (dynamic int8): odd K and N, K past the CPU's exact chunks (256-512 deep), per-tensor and per-column
     * weight scales and zero points, the full int8 range, row groups (the sequences of a ragged batch), inputs all
     * positive (zero point 0), all negative (zero point 255), all zero (scale 1), and values on quantization ties.
     */
    private static void qmatmul(List<ParityCase> all) {
        record Q(String label, int[] xDims, int n, boolean perColumn, boolean zeroPoints, int[] groups) {}
        for (Q q : List.of(
                new Q("(1,5,48) n 40", new int[] {1, 5, 48}, 40, false, false, null),
                new Q("(2,33,67) n 65 per-column", new int[] {2, 33, 67}, 65, true, false, new int[] {33, 33}),
                new Q("(7,600) n 17 zero points", new int[] {7, 600}, 17, true, true, null),
                new Q("(1,70,1536) n 48 groups 1,50,19", new int[] {1, 70, 1536}, 48, false, true, new int[] {1, 50, 19
                }),
                new Q("(3,384) n 129", new int[] {3, 384}, 129, false, false, null))) {
            CaseBuilder c = new CaseBuilder("qmatmul " + q.label());
            int k = q.xDims()[q.xDims().length - 1];
            all.add(c.done(
                    c.g.qmatmul(
                            c.normal("x", q.xDims()),
                            int8(c, k, q.n()),
                            scales(c, q.perColumn() ? q.n() : 1),
                            zeroPoints(c, q.zeroPoints() ? (q.perColumn() ? q.n() : 1) : 1, q.zeroPoints()),
                            q.groups()),
                    EXACT,
                    QMATMUL_WHY));
        }
        for (String kind : new String[] {"positive", "negative", "zeros", "ties", "extremes"}) {
            CaseBuilder c = new CaseBuilder("qmatmul " + kind + " (4,300) n 33");
            Tensor x = c.uniformT(0.5, 3, 4, 300);
            float[] d = x.data();
            for (int i = 0; i < d.length; i++)
                d[i] = switch (kind) {
                    case "negative" -> -d[i];
                    case "zeros" -> 0f;
                    case "ties" ->
                        (i % 511) - 255f; // range [-255, 255]: scale 2, zero point 127.5 -> 128, odd x on ties
                    case "extremes" -> i % 2 == 0 ? 1e30f : -1e30f;
                    default -> d[i];
                };
            Tensor w = int8(c, 300, 33);
            if (kind.equals("extremes"))
                for (int i = 0; i < w.size(); i++) w.int8()[i] = (byte) (i % 3 == 0 ? -128 : 127);
            all.add(c.done(c.g.qmatmul(c.in("x", x), w, scales(c, 33), new byte[] {0}, null), EXACT, QMATMUL_WHY));
        }
        for (boolean epilogue : new boolean[] {false, true}) {
            CaseBuilder c = new CaseBuilder("qmatmul padded batch (3,20,96) n 40" + (epilogue ? " +bias+gelu" : ""));
            Node y = c.g.qmatmul(
                    c.in("x", paddedRows(c, 3, 20, 96)),
                    int8(c, 96, 40),
                    scales(c, 40),
                    new byte[] {0},
                    new int[] {20, 20, 20},
                    c.in("padding", paddingMask(3, 20)));
            if (epilogue) y = c.g.gelu(c.g.addBias(y, c.constNormal("bias", 40)), false);
            all.add(c.done(y, epilogue ? FP32 : EXACT, epilogue ? FP32_WHY : QMATMUL_WHY));
        }
    }

    /**
     * A padded batch's key-padding mask {@code (b, len)} (1: padding): sequence 0 whole, 1 right-padded after 12 rows,
     * 2 left-padded over its first 5 (as decoders pad), 3 and on with their last row padding.
     */
    static Tensor paddingMask(int b, int len) {
        float[] m = new float[b * len];
        for (int i = 0; i < b; i++)
            for (int l = 0; l < len; l++)
                m[i * len + l] = switch (i) {
                    case 0 -> 0f;
                    case 1 -> l >= 12 ? 1f : 0f;
                    case 2 -> l < 5 ? 1f : 0f;
                    default -> l == len - 1 ? 1f : 0f;
                };
        return Tensor.of(m, b, len);
    }

    /** Normal rows whose padding rows ({@link #paddingMask}) are 40 times larger: a range that took them in would show. */
    private static Tensor paddedRows(CaseBuilder c, int b, int len, int k) {
        Tensor x = c.normalT(1.0, b, len, k);
        float[] m = paddingMask(b, len).data(), d = x.data();
        for (int r = 0; r < b * len; r++) if (m[r] != 0f) for (int i = 0; i < k; i++) d[r * k + i] *= 40f;
        return x;
    }

    /** QMATMUL with its epilogue (the CPU fuses it): bias, GELU, residual; fp32 arithmetic after the exact product. */
    private static void qmatmulChains(List<ParityCase> all) {
        for (String act : new String[] {"bias+gelu+residual", "bias+residual"}) {
            CaseBuilder c = new CaseBuilder("qmatmul epilogue " + act + " (1,70,96) n 40");
            Node x = c.normal("x", 1, 70, 96);
            Node y = c.g.addBias(
                    c.g.qmatmul(x, int8(c, 96, 40), scales(c, 40), new byte[] {0}, new int[] {30, 40}),
                    c.constNormal("bias", 40));
            if (act.contains("gelu")) y = c.g.gelu(y, false);
            all.add(c.done(c.g.add(c.normal("residual", 1, 70, 40), y), FP32, FP32_WHY));
        }
    }

    /** QEMBEDDING: int8 tables' rows dequantized; the first and last rows, zero points -128, 0 and 127. */
    private static void qembedding(List<ParityCase> all) {
        for (int zero : new int[] {-128, 0, 127}) {
            CaseBuilder c = new CaseBuilder("qembedding ids (3,7) table (1000,17) zero " + zero);
            Tensor ids = c.uniformT(0, 1000, 3, 7);
            for (int i = 0; i < ids.size(); i++) ids.data()[i] = (float) Math.floor(ids.data()[i]);
            ids.data()[0] = 0;
            ids.data()[ids.size() - 1] = 999;
            all.add(c.done(
                    c.g.qembedding(c.in("ids", ids), int8(c, 1000, 17), 0.0123f, zero),
                    EXACT,
                    "one float product per element, the definition's (DequantizeLinear)"));
        }
    }

    private static Tensor int8(CaseBuilder c, int k, int n) {
        byte[] w = new byte[k * n];
        for (int i = 0; i < w.length; i++) w[i] = (byte) (c.rnd.nextInt(256) - 128);
        return Tensor.ofInt8(w, k, n);
    }

    private static float[] scales(CaseBuilder c, int n) {
        float[] s = new float[n];
        for (int i = 0; i < n; i++) s[i] = (float) (0.001 + 0.01 * c.rnd.nextDouble());
        return s;
    }

    private static byte[] zeroPoints(CaseBuilder c, int n, boolean nonZero) {
        byte[] z = new byte[n];
        if (nonZero) for (int i = 0; i < n; i++) z[i] = (byte) (c.rnd.nextInt(256) - 128);
        return z;
    }

    private static void silu(List<ParityCase> all) {
        for (int[] dims : new int[][] {{1}, {3, 65}, {1000}}) {
            CaseBuilder c = new CaseBuilder("silu " + Arrays.toString(dims));
            all.add(c.done(c.g.silu(c.in("x", c.normalT(2.0, dims))), FP32, FP32_WHY));
        }
        CaseBuilder c = new CaseBuilder("silu large |x|");
        float[] v = {1e4f, -1e4f, 1e3f, -1e3f, 100f, -100f, 50f, -50f, 20f, -20f, 0f, 1f, -1f};
        all.add(c.done(c.g.silu(c.in("x", Tensor.of(v, v.length))), FP32, FP32_WHY));
    }

    private static void embeddingAndPositions(List<ParityCase> all) {
        record E(String label, int[] ids, int v, int e) {}
        for (E em : List.of(
                new E("ids (2,5) table (11,8)", new int[] {2, 5}, 11, 8),
                new E("one id table (1,3)", new int[] {1}, 1, 3),
                new E("ids (3,7) table (1000,17)", new int[] {3, 7}, 1000, 17))) {
            CaseBuilder c = new CaseBuilder("embedding " + em.label());
            Tensor ids = c.uniformT(0, em.v(), em.ids());
            for (int i = 0; i < ids.size(); i++) ids.data()[i] = (float) Math.floor(ids.data()[i]);
            if (ids.size() > 2) ids.data()[ids.size() - 1] = em.v() - 1; // last row of the table
            if (ids.size() > 2) ids.data()[0] = 0;
            all.add(c.done(c.g.embedding(c.in("ids", ids), c.constNormal("table", em.v(), em.e())), EXACT, EXACT_WHY));
        }
        // B, L, E, offset; the last three from engine-cpu's OpsTest (an offset near 2^14, odd and tiny E)
        int[][] pe = {
            {1, 1, 4, 0},
            {2, 17, 64, 0},
            {1, 5, 7, 3},
            {2, 3, 64, 100},
            {1, 7, 65, 1000},
            {2, 7, 1, 16380},
            {2, 7, 6, 16380},
            {2, 7, 65, 16380}
        };
        for (int[] p : pe) {
            CaseBuilder c =
                    new CaseBuilder("positional_encoding (" + p[0] + "," + p[1] + "," + p[2] + ") offset " + p[3]);
            int maxPos = p[3] + p[1];
            double bound = FP32 + 4 * 0x1p-24 * maxPos;
            all.add(c.done(
                    c.g.positionalEncoding(c.normal("x", p[0], p[1], p[2]), p[3]),
                    bound,
                    "sin/cos of an fp32 argument pos*w carry an absolute error ~2 ulp(pos) = 1.2e-7*pos"));
        }
    }

    private static void layout(List<ParityCase> all) {
        int[][] split = {{1, 1, 1, 1}, {2, 17, 64, 8}, {2, 3, 64, 1}, {1, 5, 12, 12}, {3, 4, 6, 3}}; // B, L, E, H
        for (int[] s : split) {
            CaseBuilder c = new CaseBuilder("split_heads (" + s[0] + "," + s[1] + "," + s[2] + ") H=" + s[3]);
            all.add(c.done(c.g.splitHeads(c.normal("x", s[0], s[1], s[2]), s[3]), EXACT, EXACT_WHY));
        }
        int[][] merge = {{1, 1, 1, 1}, {2, 8, 17, 8}, {2, 1, 3, 64}, {1, 12, 5, 1}, {3, 3, 4, 2}}; // B, H, L, D
        for (int[] s : merge) {
            CaseBuilder c = new CaseBuilder("merge_heads " + Arrays.toString(s));
            all.add(c.done(c.g.mergeHeads(c.normal("x", s)), EXACT, EXACT_WHY));
        }
        record Cat(int axis, int[][] parts) {}
        for (Cat cat : List.of(
                new Cat(0, new int[][] {{2, 3}, {1, 3}}),
                new Cat(1, new int[][] {{2, 3, 4}, {2, 1, 4}, {2, 5, 4}}),
                new Cat(-1, new int[][] {{2, 3, 17}, {2, 3, 1}}),
                new Cat(2, new int[][] {{1, 2, 3, 5}, {1, 2, 4, 5}}),
                new Cat(0, new int[][] {{1}, {1000}}),
                new Cat(0, new int[][] {{3, 67}, {3, 67}, {3, 67}}))) {
            StringBuilder name = new StringBuilder("concat axis " + cat.axis());
            for (int[] p : cat.parts()) name.append(' ').append(Arrays.toString(p));
            CaseBuilder c = new CaseBuilder(name.toString());
            Node[] parts = new Node[cat.parts().length];
            for (int i = 0; i < parts.length; i++) parts[i] = c.normal("p" + i, cat.parts()[i]);
            all.add(c.done(c.g.concat(cat.axis(), parts), EXACT, EXACT_WHY));
        }
        // cache_write: B, H, C, D, L, pos (first row, last rows, whole cache, one row mid-cache)
        int[][] writes = {
            {1, 1, 1, 1, 1, 0}, {2, 3, 17, 8, 1, 16}, {2, 3, 17, 8, 5, 0}, {1, 2, 9, 65, 9, 0}, {3, 2, 64, 16, 1, 31}
        };
        for (int[] w : writes) {
            CaseBuilder c = new CaseBuilder("cache_write " + Arrays.toString(w));
            Node cache = c.normal("cache", w[0], w[1], w[2], w[3]);
            Node x = c.normal("x", w[0], w[1], w[4], w[3]);
            Node pos = c.in("pos", Tensor.of(new float[] {w[5]}, 1));
            all.add(c.done(c.g.cacheWrite(cache, x, pos), EXACT, EXACT_WHY));
        }
        record Mean(int axis, int[] dims) {}
        for (Mean m : List.of(
                new Mean(1, new int[] {2, 4, 17, 19}),
                new Mean(1, new int[] {1, 1, 5}),
                new Mean(0, new int[] {3, 65}),
                new Mean(-1, new int[] {2, 1000}),
                new Mean(1, new int[] {2, 12, 3, 3}),
                new Mean(-1, new int[] {3, 67}),
                // the last axis shorter than a warp, and more rows than one block's warps (cuda: a warp per row)
                new Mean(-1, new int[] {4, 6, 3}),
                new Mean(2, new int[] {5, 8, 45}))) {
            CaseBuilder c = new CaseBuilder("mean axis " + m.axis() + " " + Arrays.toString(m.dims()));
            all.add(c.done(c.g.mean(c.normal("x", m.dims()), m.axis()), FP32, FP32_WHY));
        }
    }

    private static void attention(List<ParityCase> all) {
        // shapes and head dims, no mask: B, H, L, S, D, Dv
        int[][] shapes = {
            {1, 1, 1, 1, 1, 1}, {1, 2, 5, 9, 8, 8}, {2, 3, 17, 17, 64, 64}, {2, 1, 3, 65, 8, 5}, {1, 4, 9, 2, 1, 3}
        };
        for (int[] s : shapes) all.add(attentionCase(MaskCases.ALL.get(0), s, Float.NaN));
        all.add(attentionCase(MaskCases.ALL.get(0), new int[] {1, 2, 6, 7, 8, 8}, 1.0f));
        // every mask set-up with L != S, then causal on other shapes
        for (MaskCases.Masking m : MaskCases.ALL.subList(1, MaskCases.ALL.size()))
            all.add(attentionCase(m, new int[] {2, 3, 5, 7, 8, 8}, Float.NaN));
        all.add(attentionCase(MaskCases.ALL.get(1), new int[] {1, 2, 9, 4, 8, 8}, Float.NaN)); // L > S
        all.add(attentionCase(MaskCases.ALL.get(1), new int[] {2, 2, 17, 17, 64, 64}, Float.NaN)); // L == S
        all.add(attentionCase(MaskCases.ALL.get(10), new int[] {1, 1, 1, 65, 64, 64}, Float.NaN)); // decode step
        for (MaskCases.Masking m :
                List.of(MaskCases.CAUSAL_ADDITIVE_SEQUENCE_PADDED, MaskCases.BOOL_DEAD_ROW_FINITE_PADDING))
            all.add(attentionCase(m, new int[] {2, 2, 20, 70, 64, 64}, Float.NaN));
        for (MaskCases.Masking m : List.of(MaskCases.ALL.get(0), MaskCases.ALL.get(1))) {
            // scores up to ~1e4: exp without subtracting the running max overflows. Integer q, k (|v| <= 50, D = 16)
            // make every dot product exact in fp32 and the scale 1/sqrt(16) = 0.25 is a power of two, so the scores
            // carry no rounding and the usual bound holds.
            CaseBuilder c = new CaseBuilder("attention large scores (integer q,k) " + m.label() + " B2 H2 L9 S33 D16");
            Tensor qt = c.uniformT(-50, 51, 2, 2, 9, 16), kt = c.uniformT(-50, 51, 2, 2, 33, 16);
            for (Tensor t : List.of(qt, kt))
                for (int i = 0; i < t.size(); i++) t.data()[i] = (float) Math.floor(t.data()[i]);
            Node q = c.in("q", qt), k = c.in("k", kt), v = c.normal("v", 2, 2, 33, 16);
            all.add(c.done(c.g.attention(q, k, v, Float.NaN, m.spec(), null, null), FP32, "exact scores; " + FP32_WHY));
        }
        {
            // scores ~1e30 (engine-cpu's AttentionTest): the softmax is one-hot; nothing may overflow to NaN
            CaseBuilder c = new CaseBuilder("attention huge scores (q x 1e30) causal B1 H2 L20 S150 D8");
            Tensor qt = c.normalT(1.0, 1, 2, 20, 8);
            for (int i = 0; i < qt.size(); i++) qt.data()[i] *= 1e30f;
            Node q = c.in("q", qt), k = c.normal("k", 1, 2, 150, 8), v = c.normal("v", 1, 2, 150, 8);
            all.add(c.done(c.g.attention(q, k, v, 1f, MaskSpec.CAUSAL, null, null), FP32, FP32_WHY));
        }
        attentionTiles(all);
        raggedAttention(all);
        groupedQueryAttention(all);
        windowedAttention(all);
        relativeAttention(all);
    }

    /**
     * A relative position bias ({@link MaskKind#RELATIVE}, {@code (H|1, L + S - 1)}: MPNet's), beyond the small
     * every-mask cases: several key tiles of every backend (64 keys on the CPU, 32-128 in the CUDA kernels) with a last
     * tile cut short, two query blocks, head dims 32/64/128, one row of biases shared by the heads, with causal, a
     * window, key padding, grouped K/V heads, a decoding step (L = 1), and ragged batches (the offsets within a sequence
     * are those of the whole). Inputs uniform in [-1, 1] as {@link #TILES_16_BIT} assumes, the biases normal (sigma 1).
     */
    private static void relativeAttention(List<ParityCase> all) {
        // label, B, H, Hkv, L, S, D, heads of the bias (H or 1), spec
        record R(String label, int b, int h, int hkv, int l, int s, int d, boolean perHead, MaskSpec spec) {}
        MaskSpec rel = new MaskSpec(false, MaskKind.RELATIVE, MaskKind.NONE);
        List<R> rs = List.of(
                new R("alone", 2, 4, 4, 70, 70, 64, true, rel),
                new R("shared by the heads", 1, 2, 2, 150, 150, 32, false, rel),
                new R("L<S", 1, 2, 2, 19, 135, 128, true, rel),
                new R("causal", 1, 2, 2, 130, 130, 128, true, new MaskSpec(true, MaskKind.RELATIVE, MaskKind.NONE)),
                new R("window 16/16", 1, 2, 2, 200, 200, 64, true, rel.window(16, 16)),
                new R(
                        "+ bool padding",
                        3,
                        2,
                        2,
                        45,
                        45,
                        64,
                        true,
                        new MaskSpec(false, MaskKind.RELATIVE, MaskKind.BOOL)),
                new R("gqa group 2", 1, 4, 2, 66, 66, 64, true, rel),
                new R("decode step", 2, 2, 2, 1, 65, 64, true, rel));
        for (R r : rs) {
            CaseBuilder c = new CaseBuilder("attention relative bias " + r.label() + " B" + r.b() + " H" + r.h()
                    + (r.hkv() != r.h() ? " Hkv" + r.hkv() : "") + " L" + r.l() + " S" + r.s() + " D" + r.d());
            Node q = c.in("q", c.uniformT(-1, 1, r.b(), r.h(), r.l(), r.d()));
            Node k = c.in("k", c.uniformT(-1, 1, r.b(), r.hkv(), r.s(), r.d()));
            Node v = c.in("v", c.uniformT(-1, 1, r.b(), r.hkv(), r.s(), r.d()));
            Node am = c.in("relative_bias", c.normalT(1.0, r.perHead() ? r.h() : 1, r.l() + r.s() - 1));
            Node kp = r.spec().keyPadding() == MaskKind.BOOL
                    ? c.in("key_padding", MaskCases.tailPadding(r.b(), r.s(), 1f))
                    : null;
            all.add(c.done(
                    c.g.attention(q, k, v, Float.NaN, r.spec(), am, kp),
                    FP32,
                    "fp32: scores of D <= 128 terms in [-1, 1] plus biases of about 1, outputs convex combinations of"
                            + " rows of v; 16 bits: see TILES_16_BIT",
                    TILES_16_BIT));
        }
        // ragged batches: the bias (H, 2T - 1) of the whole plane of T positions, each sequence reading its offsets
        for (boolean causal : new boolean[] {false, true}) {
            int[] len = {70, 3, 9};
            int t = 82;
            CaseBuilder c = new CaseBuilder(
                    "attention relative bias ragged [70, 3, 9]" + (causal ? " causal" : "") + " B1 H4 Hkv2 D32");
            Node q = c.normal("q", 1, 4, t, 32), k = c.normal("k", 1, 2, t, 32), v = c.normal("v", 1, 2, t, 32);
            Node am = c.in("relative_bias", c.normalT(1.0, 4, 2 * t - 1));
            all.add(c.done(
                    c.g.attention(
                            q, k, v, Float.NaN, MaskSpec.segments(causal, len).relative(), am, null),
                    FP32,
                    FP32_WHY));
        }
    }

    /**
     * Grouped-query attention: k, v with {@code Hkv} heads shared by groups of {@code H / Hkv} query heads (query head
     * h reads K/V head h / (H / Hkv), PyTorch's {@code repeat_interleave} / {@code enable_gqa=True}); groups of 2 and
     * 4 and multi-query attention (Hkv = 1), with causal masking, key padding on the right and on the left (a decoder
     * batch), per-query-head masks, odd lengths, a decoding step, two query tiles, head dims 64 and 128 (the flash
     * kernels, inputs uniform in [-1, 1] as {@link #TILES_16_BIT} assumes), a small head dim with Dv != D (the
     * fused/unfused CUDA paths) and ragged batches.
     */
    private static void groupedQueryAttention(List<ParityCase> all) {
        // label, B, H, Hkv, L, S, D, masking
        record G(String label, int b, int h, int hkv, int l, int s, int d, MaskCases.Masking m) {}
        List<G> gs = List.of(
                new G("group 2", 2, 4, 2, 37, 45, 64, MaskCases.ALL.get(0)),
                new G("group 4 causal", 2, 8, 2, 33, 33, 128, MaskCases.ALL.get(1)),
                new G("MQA key padding bool", 2, 4, 1, 20, 70, 64, MaskCases.ALL.get(8)),
                new G(
                        "group 2 all-masked rows: causal+left padding",
                        3,
                        4,
                        2,
                        23,
                        23,
                        64,
                        MaskCases.CAUSAL_LEFT_PADDING),
                new G(
                        "group 4 all-masked rows: causal+left padding",
                        3,
                        8,
                        2,
                        19,
                        19,
                        128,
                        MaskCases.CAUSAL_LEFT_PADDING),
                new G("group 3 bool(B,H,L,S)", 2, 6, 2, 9, 66, 64, MaskCases.ALL.get(5)),
                new G(
                        "group 2 all-masked rows: causal+additive(1,H,L,S)+additive padding",
                        2,
                        6,
                        3,
                        35,
                        35,
                        128,
                        MaskCases.ALL.get(11)),
                new G("MQA decode step causal+bool(L,S)+key padding", 2, 8, 1, 1, 65, 64, MaskCases.ALL.get(10)),
                new G("group 2 causal 2 query tiles", 1, 4, 2, 150, 140, 128, MaskCases.ALL.get(1)),
                new G("MQA causal 2 query tiles", 1, 4, 1, 130, 130, 64, MaskCases.ALL.get(1)));
        for (G t : gs) {
            CaseBuilder c = new CaseBuilder("attention gqa " + t.label() + " B" + t.b() + " H" + t.h() + " Hkv"
                    + t.hkv() + " L" + t.l() + " S" + t.s() + " D" + t.d());
            Node q = c.in("q", c.uniformT(-1, 1, t.b(), t.h(), t.l(), t.d()));
            Node k = c.in("k", c.uniformT(-1, 1, t.b(), t.hkv(), t.s(), t.d()));
            Node v = c.in("v", c.uniformT(-1, 1, t.b(), t.hkv(), t.s(), t.d()));
            Node am = t.m().attnNode(c, t.b(), t.h(), t.l(), t.s()), kp = t.m().padNode(c, t.b(), t.h(), t.l(), t.s());
            all.add(c.done(
                    c.g.attention(q, k, v, Float.NaN, t.m().spec(), am, kp),
                    FP32,
                    "fp32: scores of D <= 128 terms in [-1, 1], outputs convex combinations of S <= 150 rows of v;"
                            + " 16 bits: see TILES_16_BIT",
                    TILES_16_BIT));
        }
        {
            CaseBuilder c = new CaseBuilder("attention gqa group 3 causal B2 H6 Hkv2 L5 S7 D8 Dv5");
            Node q = c.normal("q", 2, 6, 5, 8), k = c.normal("k", 2, 2, 7, 8), v = c.normal("v", 2, 2, 7, 5);
            all.add(c.done(c.g.attention(q, k, v, Float.NaN, MaskSpec.CAUSAL, null, null), FP32, FP32_WHY));
        }
        for (boolean causal : new boolean[] {false, true}) {
            CaseBuilder c =
                    new CaseBuilder("attention gqa ragged [70, 3, 9]" + (causal ? " causal" : "") + " B1 H4 Hkv2 D32");
            Node q = c.normal("q", 1, 4, 82, 32), k = c.normal("k", 1, 2, 82, 32), v = c.normal("v", 1, 2, 82, 32);
            all.add(c.done(
                    c.g.attention(q, k, v, Float.NaN, MaskSpec.segments(causal, 70, 3, 9), null, null),
                    FP32,
                    FP32_WHY));
        }
    }

    /**
     * Sliding windows ({@link MaskSpec#window}): query {@code i} sees keys {@code i - left <= j <= i + right}.
     * ModernBERT's local layers (|i - j| <= local_attention / 2), Mistral's causal windows (left = sliding_window - 1),
     * windows smaller and larger than L, one side open, 0 and 1 wide, with key padding (rows whose window holds only
     * padding: all masked), with an attention mask, L != S, odd lengths; L = 300 and 200 walk several key tiles of every
     * backend (64 keys on the CPU, 32-128 in the CUDA kernels), so tiles wholly outside a block's windows are skipped and
     * the tiles wholly inside take the fast paths. Inputs uniform in [-1, 1], as {@link #TILES_16_BIT} assumes.
     */
    private static void windowedAttention(List<ParityCase> all) {
        int open = MaskSpec.UNBOUNDED;
        // label, B, H, L, S, D, left, right, causal, attention mask kind, key padding kind
        record W(
                String label,
                int b,
                int h,
                int l,
                int s,
                int d,
                int left,
                int right,
                boolean causal,
                MaskKind mask,
                MaskKind pad) {}
        List<W> ws = List.of(
                new W("4/4 (local_attention 8)", 2, 2, 37, 37, 64, 4, 4, false, MaskKind.NONE, MaskKind.NONE),
                new W("4/4 + bool padding", 3, 2, 37, 37, 64, 4, 4, false, MaskKind.NONE, MaskKind.BOOL),
                new W("64/64 many tiles", 1, 2, 300, 300, 64, 64, 64, false, MaskKind.NONE, MaskKind.NONE),
                new W("64/64 many tiles", 1, 2, 300, 300, 128, 64, 64, false, MaskKind.NONE, MaskKind.NONE),
                new W("40/40 + additive padding", 2, 2, 200, 200, 128, 40, 40, false, MaskKind.NONE, MaskKind.ADDITIVE),
                new W(
                        "causal 15/open (sliding_window 16)",
                        1,
                        2,
                        70,
                        70,
                        64,
                        15,
                        open,
                        true,
                        MaskKind.NONE,
                        MaskKind.NONE),
                new W("causal 100/open many tiles", 1, 2, 260, 260, 64, 100, open, true, MaskKind.NONE, MaskKind.NONE),
                new W("100/100 wider than L", 1, 2, 21, 21, 64, 100, 100, false, MaskKind.NONE, MaskKind.NONE),
                new W(
                        "all-masked rows: 0/0 + bool padding",
                        3,
                        1,
                        17,
                        17,
                        64,
                        0,
                        0,
                        false,
                        MaskKind.NONE,
                        MaskKind.BOOL),
                new W("1/1 L<S", 1, 2, 19, 23, 128, 1, 1, false, MaskKind.NONE, MaskKind.NONE),
                new W("all-masked rows: 5/open L>S", 1, 2, 33, 20, 64, 5, open, false, MaskKind.NONE, MaskKind.NONE),
                new W("open/3 + additive (L,S)", 1, 2, 29, 29, 64, open, 3, false, MaskKind.ADDITIVE, MaskKind.NONE),
                new W(
                        "all-masked rows: causal 0/open + additive padding",
                        2,
                        2,
                        9,
                        9,
                        64,
                        0,
                        open,
                        true,
                        MaskKind.NONE,
                        MaskKind.ADDITIVE));
        for (W w : ws) {
            CaseBuilder c = new CaseBuilder("attention window " + w.label() + " B" + w.b() + " H" + w.h() + " L" + w.l()
                    + " S" + w.s() + " D" + w.d());
            Node q = c.in("q", c.uniformT(-1, 1, w.b(), w.h(), w.l(), w.d()));
            Node k = c.in("k", c.uniformT(-1, 1, w.b(), w.h(), w.s(), w.d()));
            Node v = c.in("v", c.uniformT(-1, 1, w.b(), w.h(), w.s(), w.d()));
            Node am = w.mask() == MaskKind.NONE ? null : c.in("attn_mask", c.additiveT(0.15, w.l(), w.s()));
            Node kp = null;
            if (w.pad() == MaskKind.BOOL) kp = c.in("key_padding", MaskCases.tailPadding(w.b(), w.s(), 1f));
            else if (w.pad() == MaskKind.ADDITIVE) kp = c.in("key_padding", c.additiveT(0.15, w.b(), w.s()));
            MaskSpec spec = new MaskSpec(w.causal(), w.mask(), w.pad()).window(w.left(), w.right());
            all.add(c.done(
                    c.g.attention(q, k, v, Float.NaN, spec, am, kp),
                    FP32,
                    "fp32: scores of D <= 128 terms in [-1, 1], outputs convex combinations of rows of v; 16 bits: see"
                            + " TILES_16_BIT",
                    TILES_16_BIT));
        }
        // Mistral / Qwen2 with a window: grouped K/V heads and a causal sliding window together, left padding
        {
            CaseBuilder c =
                    new CaseBuilder("attention window gqa causal 15/open + bool padding B2 H4 Hkv2 L70 S70 D64");
            Node q = c.in("q", c.uniformT(-1, 1, 2, 4, 70, 64));
            Node k = c.in("k", c.uniformT(-1, 1, 2, 2, 70, 64));
            Node v = c.in("v", c.uniformT(-1, 1, 2, 2, 70, 64));
            Node kp = c.in("key_padding", MaskCases.tailPadding(2, 70, 1f));
            MaskSpec spec = new MaskSpec(true, MaskKind.NONE, MaskKind.BOOL).window(15, MaskSpec.UNBOUNDED);
            all.add(c.done(
                    c.g.attention(q, k, v, Float.NaN, spec, null, kp),
                    FP32,
                    "fp32: scores of D = 64 terms in [-1, 1], outputs convex combinations of rows of v; 16 bits: see"
                            + " TILES_16_BIT",
                    TILES_16_BIT));
        }
        // Gemma 3 / EmbeddingGemma: heads of 256 (past the CUDA flash kernels' sizes; the CPU's kernels take any), one
        // key/value head for 3 query heads, a bidirectional window |i - j| <= 5 with padding, a ragged batch under the
        // window, Gemma's own score scale (query_pre_attn_scalar 24), causal
        record G(String label, int b, int h, int hkv, int l, int d, float scale, MaskSpec spec) {}
        MaskSpec bidi = new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL).window(5, 5);
        List<G> gs = List.of(
                new G("MQA window 5/5 + bool padding", 2, 3, 1, 40, 256, Float.NaN, bidi),
                new G(
                        "MQA ragged [33, 6] window 5/5",
                        1,
                        3,
                        1,
                        39,
                        256,
                        Float.NaN,
                        MaskSpec.segments(false, 33, 6).window(5, 5)),
                new G("scale 24^-0.5", 1, 2, 2, 70, 256, (float) Math.pow(24, -0.5), MaskSpec.NONE),
                new G("causal", 1, 2, 1, 70, 256, Float.NaN, MaskSpec.CAUSAL));
        for (G w : gs) {
            CaseBuilder c = new CaseBuilder("attention head dim 256 " + w.label() + " B" + w.b() + " H" + w.h() + " Hkv"
                    + w.hkv() + " L" + w.l() + " D" + w.d());
            Node q = c.in("q", c.uniformT(-1, 1, w.b(), w.h(), w.l(), w.d()));
            Node k = c.in("k", c.uniformT(-1, 1, w.b(), w.hkv(), w.l(), w.d()));
            Node v = c.in("v", c.uniformT(-1, 1, w.b(), w.hkv(), w.l(), w.d()));
            Node kp = w.spec().keyPadding() == MaskKind.BOOL
                    ? c.in("key_padding", MaskCases.tailPadding(w.b(), w.l(), 1f))
                    : null;
            all.add(c.done(
                    c.g.attention(q, k, v, w.scale(), w.spec(), null, kp),
                    FP32,
                    "fp32: scores of D = 256 terms in [-1, 1], outputs convex combinations of rows of v; 16 bits: see"
                            + " TILES_16_BIT",
                    TILES_16_BIT));
        }
    }

    /**
     * Bounds of the {@link #attentionTiles} cases at 16-bit precision. Each of q, k, v and the probabilities p is rounded
     * once to 16 bits (unit round-off u = 2^-9 for bf16, 2^-12 for fp16), products accumulate in fp32. A scaled score
     * q.k / sqrt(D) then errs by about 2u sqrt(D) |q||k| / (sqrt(D) * D) ~ 2u/3 with inputs uniform in [-1, 1] (the
     * D rounding errors add like a random walk), which changes each weight relatively by as much; rounding v and p adds
     * 2u. So the output's relative error is at most about 3u ~ 6e-3 (bf16) / 7e-4 (fp16) in the typical case (the
     * emulated tensor-core kernels measured 2.4e-3 and 3.1e-4: the errors partly cancel); 2e-2 and 4e-3 leave a 3-10x
     * margin while an indexing, masking or rescaling bug (O(1) relative) still fails.
     */
    static final Map<Precision, Double> TILES_16_BIT = Map.of(Precision.BF16, 2e-2, Precision.FP16, 4e-3);

    /**
     * The flash kernels' tiles (moved from engine-cuda's FlashChecks, whose cases only the CUDA backend saw): head dims
     * 32, 64 and 128 (the sizes the flash kernels take), L and S not multiples of 32, causal masking with L > S and S >
     * L (skipped tiles), several key tiles (150 keys: the running max and the rescaling across tiles), two query tiles
     * of 128 rows (the 16-bit FA2 kernels' largest), and a row of the first mask slice with every key masked. Inputs uniform in [-1, 1], as {@link #TILES_16_BIT} assumes.
     */
    private static void attentionTiles(List<ParityCase> all) {
        // label, B, H, L, S, causal, attention mask kind and dims (mB == 0: (L, S)), key padding kind
        record T(
                String label,
                int b,
                int h,
                int l,
                int s,
                boolean causal,
                MaskKind mask,
                int mB,
                int mH,
                MaskKind pad) {}
        List<T> ts = List.of(
                new T("none", 2, 2, 37, 45, false, MaskKind.NONE, 0, 0, MaskKind.NONE),
                new T("causal L>S", 1, 2, 70, 45, true, MaskKind.NONE, 0, 0, MaskKind.NONE),
                new T("causal S>L", 2, 1, 33, 80, true, MaskKind.NONE, 0, 0, MaskKind.NONE),
                new T(
                        "all-masked row: bool(L,S)+bool padding",
                        2,
                        2,
                        20,
                        40,
                        false,
                        MaskKind.BOOL,
                        0,
                        0,
                        MaskKind.BOOL),
                new T(
                        "all-masked row: causal+additive(B,1,L,S)+additive padding",
                        2,
                        3,
                        35,
                        35,
                        true,
                        MaskKind.ADDITIVE,
                        2,
                        1,
                        MaskKind.ADDITIVE),
                new T("all-masked row: bool(1,H,L,S)", 1, 3, 9, 66, false, MaskKind.BOOL, 1, 3, MaskKind.NONE),
                new T("3 key tiles, additive padding", 1, 2, 70, 150, false, MaskKind.NONE, 0, 0, MaskKind.ADDITIVE),
                // two query tiles of the 16-bit FA2 kernels' 128 rows: causal diagonal tiles and skipped key tiles in
                // the second block; a full (B, H, L, S) mask with key padding over two blocks
                new T("causal 2 query tiles of 128", 1, 2, 150, 140, true, MaskKind.NONE, 0, 0, MaskKind.NONE),
                new T(
                        "all-masked row: bool(B,H,L,S)+bool padding, 2 query tiles of 128",
                        2,
                        2,
                        130,
                        100,
                        false,
                        MaskKind.BOOL,
                        2,
                        2,
                        MaskKind.BOOL));
        for (int d : new int[] {32, 64, 128})
            for (T t : ts) {
                CaseBuilder c = new CaseBuilder("attention tiles " + t.label() + " B" + t.b() + " H" + t.h() + " L"
                        + t.l() + " S" + t.s() + " D" + d);
                Node q = c.in("q", c.uniformT(-1, 1, t.b(), t.h(), t.l(), d));
                Node k = c.in("k", c.uniformT(-1, 1, t.b(), t.h(), t.s(), d));
                Node v = c.in("v", c.uniformT(-1, 1, t.b(), t.h(), t.s(), d));
                Node am = null, kp = null;
                if (t.mask() != MaskKind.NONE) {
                    int[] dims = t.mB() == 0 ? new int[] {t.l(), t.s()} : new int[] {t.mB(), t.mH(), t.l(), t.s()};
                    Tensor m = t.mask() == MaskKind.BOOL ? c.boolT(0.25, dims) : c.additiveT(0.15, dims);
                    for (int j = 0; j < t.s(); j++) // row 2 of the first mask slice: every key masked
                    m.data()[2 * t.s() + j] = t.mask() == MaskKind.BOOL ? 1f : Float.NEGATIVE_INFINITY;
                    am = c.in("attn_mask", m);
                }
                if (t.pad() != MaskKind.NONE)
                    kp = c.in(
                            "key_padding",
                            t.pad() == MaskKind.BOOL ? c.boolT(0.25, t.b(), t.s()) : c.additiveT(0.15, t.b(), t.s()));
                MaskSpec spec = new MaskSpec(t.causal(), t.mask(), t.pad());
                all.add(c.done(
                        c.g.attention(q, k, v, Float.NaN, spec, am, kp),
                        FP32,
                        "fp32: scores of D <= 128 terms in [-1, 1], outputs convex combinations of S <= 150 rows of v"
                                + " (measured ~1e-7); 16 bits: see TILES_16_BIT",
                        TILES_16_BIT));
            }
    }

    /**
     * Ragged batches: sequences of different lengths laid one after another in each (batch, head) plane, each
     * attending to itself (causal within itself when asked): lengths of one row, several fast-path key tiles (the CPU
     * tiles are 64 keys), ragged tile edges; head sizes of the sentence encoders (32, 64).
     */
    private static void raggedAttention(List<ParityCase> all) {
        int[][] lengths = {{5}, {1, 7, 3}, {70, 1, 13, 64, 2}, {130, 9}};
        int[] heads = {8, 32, 64, 32};
        for (int x = 0; x < lengths.length; x++)
            for (boolean causal : new boolean[] {false, true}) {
                int[] len = lengths[x];
                int t = Arrays.stream(len).sum(), d = heads[x];
                CaseBuilder c = new CaseBuilder(
                        "attention ragged " + Arrays.toString(len) + (causal ? " causal" : "") + " B1 H2 D" + d);
                Node q = c.normal("q", 1, 2, t, d), k = c.normal("k", 1, 2, t, d), v = c.normal("v", 1, 2, t, d);
                all.add(c.done(
                        c.g.attention(q, k, v, Float.NaN, MaskSpec.segments(causal, len), null, null), FP32, FP32_WHY));
            }
        // a sliding window within each sequence (ModernBERT's local layers on a ragged batch); then ModernBERT-base's
        // 64/64 on a batch of sentences: the window holds the whole of every sequence but the first (the CPU backend
        // then runs those as unwindowed), not of the first
        all.add(raggedWindow(new int[] {70, 1, 13, 64, 2}, 3));
        all.add(raggedWindow(new int[] {70, 1, 13, 65, 2}, 64));
        CaseBuilder c = new CaseBuilder("attention ragged [3, 6] B2 H3 D16 Dv8");
        Node q = c.normal("q", 2, 3, 9, 16), k = c.normal("k", 2, 3, 9, 16), v = c.normal("v", 2, 3, 9, 8);
        all.add(c.done(c.g.attention(q, k, v, Float.NaN, MaskSpec.segments(false, 3, 6), null, null), FP32, FP32_WHY));
    }

    private static ParityCase attentionCase(MaskCases.Masking m, int[] s, float scale) {
        int b = s[0], h = s[1], l = s[2], len = s[3], d = s[4], dv = s[5];
        String sc = Float.isNaN(scale) ? "" : " scale " + scale;
        CaseBuilder c = new CaseBuilder(
                "attention " + m.label() + " B" + b + " H" + h + " L" + l + " S" + len + " D" + d + " Dv" + dv + sc);
        Node q = c.normal("q", b, h, l, d), k = c.normal("k", b, h, len, d), v = c.normal("v", b, h, len, dv);
        Node am = m.attnNode(c, b, h, l, len), kp = m.padNode(c, b, h, l, len);
        return c.done(c.g.attention(q, k, v, scale, m.spec(), am, kp), FP32, FP32_WHY);
    }

    private static void rmsNorm(List<ParityCase> all) {
        record R(String label, int[] dims, boolean w, float eps) {}
        for (R r : List.of(
                new R("weight", new int[] {3, 17}, true, 1e-6f),
                new R("no weight", new int[] {2, 5, 64}, false, 1e-6f),
                new R("weight", new int[] {4, 1000}, true, 1e-5f),
                new R("weight, per head (Qwen3 q/k norm)", new int[] {2, 3, 5, 128}, true, 1e-6f),
                new R("weight", new int[] {3, 63}, true, 1e-6f))) {
            CaseBuilder c = new CaseBuilder("rms_norm " + r.label() + " " + Arrays.toString(r.dims()));
            int e = r.dims()[r.dims().length - 1];
            Node x = c.normal("x", r.dims());
            all.add(c.done(c.g.rmsNorm(x, r.w() ? c.constNormal("weight", e) : null, r.eps()), FP32, FP32_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("rms_norm large values (x ~ 1e15) (3,65)");
            Node x = c.in("x", c.normalT(1e15, 3, 65));
            all.add(c.done(c.g.rmsNorm(x, c.constNormal("weight", 65), 1e-6f), FP32, FP32_WHY));
        }
        {
            // mean(x^2) ~ 1e-6 against eps 1e-5: eps inside the square root matters here, and a zero row stays zero
            CaseBuilder c = new CaseBuilder("rms_norm small rows (x ~ 1e-3, eps dominates, a zero row) (4,33)");
            Tensor t = c.normalT(1e-3, 4, 33);
            for (int j = 0; j < 33; j++) t.data()[2 * 33 + j] = 0f;
            all.add(c.done(c.g.rmsNorm(c.in("x", t), c.constNormal("weight", 33), 1e-5f), FP32, FP32_WHY));
        }
    }

    /** The ROPE bound: the angle is one float32 product in every backend and the reference; cos/sin round once. */
    static final String ROPE_WHY = "fp32: the float32 angle is the op's definition (reference and backends alike);"
            + " cos, sin and the rotation round a few times (~6e-8 each)";

    private static void rope(List<ParityCase> all) {
        // B, H, L, D, rotary dim, theta, offset: full and partial rotary (GTE / NomicBERT style halves), the
        // thetas of BERT-like rotary encoders (1e4), ModernBERT's global layers (1.6e5) and Qwen (1e6), positions up
        // to 8191 (ModernBERT's context), odd D with a pass-through tail, D 80 (half 40: vector tails)
        record R(int b, int h, int l, int d, int rd, float theta, int offset) {}
        for (R r : List.of(
                new R(2, 3, 17, 64, 64, 10000f, 0),
                new R(1, 2, 5, 32, 32, 1e6f, 8187),
                new R(2, 2, 7, 64, 32, 160000f, 3),
                new R(1, 3, 9, 128, 128, 1e6f, 0),
                new R(1, 2, 3, 7, 4, 10000f, 1),
                new R(1, 2, 65, 80, 80, 10000f, 0),
                new R(2, 1, 4, 96, 24, 160000f, 4000))) {
            CaseBuilder c = new CaseBuilder("rope (" + r.b() + "," + r.h() + "," + r.l() + "," + r.d() + ") rotary "
                    + r.rd() + " theta " + (long) r.theta() + " offset " + r.offset());
            Node x = c.normal("x", r.b(), r.h(), r.l(), r.d());
            all.add(c.done(c.g.rope(x, r.theta(), r.rd(), r.offset()), FP32, ROPE_WHY));
        }
        // a runtime start (a decoder step at its cache row; a prefill after a prefix), plus a build-time offset
        for (int[] st : new int[][] {{2, 3, 1, 64, 64, 37, 0}, {1, 2, 4, 64, 48, 1000, 5}}) {
            CaseBuilder c = new CaseBuilder("rope start " + st[5] + " (" + st[0] + "," + st[1] + "," + st[2] + ","
                    + st[3] + ") rotary " + st[4] + " offset " + st[6]);
            Node x = c.normal("x", st[0], st[1], st[2], st[3]);
            Node pos = c.in("pos", Tensor.of(new float[] {st[5]}, 1));
            all.add(c.done(c.g.rope(x, pos, 1e6f, st[4], st[6]), FP32, ROPE_WHY));
        }
        {
            // per-row position ids: a left-padded batch (pads at position 0 or 1, as decoders' position_ids give them)
            CaseBuilder c = new CaseBuilder("rope position ids, left padding (3,2,6,64) rotary 64 theta 1000000");
            float[] ids = {0, 1, 2, 3, 4, 5, 1, 1, 1, 0, 1, 2, 0, 0, 0, 1, 2, 3};
            Node x = c.normal("x", 3, 2, 6, 64);
            Node p = c.in("ids", Tensor.of(ids, 3, 6));
            all.add(c.done(c.g.rope(x, p, 1e6f, 64, 0), FP32, ROPE_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("rope position ids, large and unordered (2,1,5,32) rotary 16 offset 2");
            float[] ids = {16000, 0, 7, 8191, 3, 5, 5, 12345, 1, 9000};
            Node x = c.normal("x", 2, 1, 5, 32);
            Node p = c.in("ids", Tensor.of(ids, 2, 5));
            all.add(c.done(c.g.rope(x, p, 10000f, 16, 2), FP32, ROPE_WHY));
        }
        {
            // rope scaling (transformers' rope_type): Llama 3.1's llama3 settings (frequencies divided, kept and
            // blended) at far position ids, and linear scaling from a runtime start
            CaseBuilder c = new CaseBuilder("rope scaling llama3 factor 8 (2,2,4,128) theta 500000 position ids");
            float[] ids = {0, 1, 2, 3, 9000, 9001, 16000, 70000};
            Node x = c.normal("x", 2, 2, 4, 128);
            Node p = c.in("ids", Tensor.of(ids, 2, 4));
            var llama3 = OpParams.Rope.Scaling.llama3(8, 1, 4, 8192);
            all.add(c.done(c.g.rope(x, p, 500000f, 128, 0, llama3), FP32, ROPE_WHY));
        }
        {
            CaseBuilder c = new CaseBuilder("rope scaling linear factor 4 start 3000 (1,2,3,64) rotary 32");
            Node x = c.normal("x", 1, 2, 3, 64);
            Node pos = c.in("pos", Tensor.of(new float[] {3000}, 1));
            all.add(c.done(c.g.rope(x, pos, 10000f, 32, 0, OpParams.Rope.Scaling.linear(4)), FP32, ROPE_WHY));
        }
        {
            // GTE's remote-code NTK scaling (theta 20000, factor 8: a large factor, so that the division shows): base
            // theta * 8, every
            // frequency / 8^(2/64); far position ids
            CaseBuilder c = new CaseBuilder("rope scaling ntk factor 8 (2,2,3,64) theta 20000 position ids");
            float[] ids = {0, 5, 511, 2, 4000, 8191};
            Node x = c.normal("x", 2, 2, 3, 64);
            Node p = c.in("ids", Tensor.of(ids, 2, 3));
            all.add(c.done(c.g.rope(x, p, 20000f, 64, 0, OpParams.Rope.Scaling.ntk(8)), FP32, ROPE_WHY));
        }
    }

    private static void glu(List<ParityCase> all) {
        record G(OpParams.Glu.Activation act, boolean first, int[] dims) {}
        var silu = OpParams.Glu.Activation.SILU;
        var gelu = OpParams.Glu.Activation.GELU;
        var tanh = OpParams.Glu.Activation.GELU_TANH;
        for (G gc : List.of(
                new G(silu, true, new int[] {3, 34}),
                new G(silu, false, new int[] {2, 3, 130}),
                new G(gelu, true, new int[] {2, 5, 126}),
                new G(gelu, false, new int[] {1, 2}),
                new G(tanh, true, new int[] {4, 500}),
                new G(tanh, false, new int[] {7, 66}),
                new G(silu, true, new int[] {1, 2000}))) {
            CaseBuilder c = new CaseBuilder("glu " + gc.act().name().toLowerCase(java.util.Locale.ROOT) + " activated "
                    + (gc.first() ? "first" : "second") + " " + Arrays.toString(gc.dims()));
            all.add(c.done(c.g.glu(c.in("x", c.normalT(2.0, gc.dims())), gc.act(), gc.first()), FP32, FP32_WHY));
        }
        float[] v = {1e4f, -1e4f, 1e3f, -1e3f, 100f, -100f, 20f, -20f, 0f, 1f, -1f, 5.5f};
        for (var act : OpParams.Glu.Activation.values()) {
            // the activated half takes the large values, the other half standard normal values
            CaseBuilder c = new CaseBuilder(
                    "glu " + act.name().toLowerCase(java.util.Locale.ROOT) + " activated first large |x| (1,24)");
            Tensor t = c.normalT(1.0, 1, 2 * v.length);
            System.arraycopy(v, 0, t.data(), 0, v.length);
            all.add(c.done(c.g.glu(c.in("x", t), act, true), FP32, FP32_WHY));
        }
        {
            // a fused up+gate projection, then the GLU (the FFN's first half)
            CaseBuilder c = new CaseBuilder("glu silu activated first after linear (2,9,48).(80,48)^T");
            Node y = c.g.linear(c.normal("x", 2, 9, 48), c.constNormal("w", 80, 48), null);
            all.add(c.done(c.g.glu(y, silu, true), FP32, FP32_WHY));
        }
    }

    /** Attention over a ragged batch of {@code len} sequences, a window of {@code w} keys either side. */
    private static ParityCase raggedWindow(int[] len, int w) {
        int t = Arrays.stream(len).sum();
        CaseBuilder c =
                new CaseBuilder("attention ragged " + Arrays.toString(len) + " window " + w + "/" + w + " B1 H2 D64");
        Node q = c.normal("q", 1, 2, t, 64), k = c.normal("k", 1, 2, t, 64), v = c.normal("v", 1, 2, t, 64);
        return c.done(
                c.g.attention(q, k, v, Float.NaN, MaskSpec.segments(false, len).window(w, w), null, null),
                FP32,
                FP32_WHY);
    }
}
