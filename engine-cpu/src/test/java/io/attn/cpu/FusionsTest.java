package io.attn.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.BackendOptions;
import io.attn.backend.Program;
import io.attn.exec.BufferPlan;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The CPU backend's fusion rules ({@link io.attn.cpu.ops.Fusions}): which runs of primitive nodes its program fuses,
 * that each fused program gives bitwise what the same graph run one node at a time gives ({@link Program#unfused}),
 * and what must not be fused (a value read twice, a graph output, a residual computed after the product).
 */
class FusionsTest {
    private final Random r = new Random(7);

    private Node w(GraphBuilder g, String name, int... dims) {
        return g.constant(name, Support.tensor(r, dims));
    }

    /** An encoder layer as nn builds it: q/k/v split into heads, the weights, two residual blocks, a ReLU FFN. */
    private Graph encoderLayer(GraphBuilder g) {
        int e = 64, heads = 4;
        Node x = g.input("x", 2, 17, e);
        Node pad = g.input("pad", 2, 17);
        Node q = g.splitHeads(g.linear(x, w(g, "wq", e, e), w(g, "bq", e)), heads);
        Node k = g.splitHeads(g.linear(x, w(g, "wk", e, e), w(g, "bk", e)), heads);
        Node v = g.splitHeads(g.linear(x, w(g, "wv", e, e), w(g, "bv", e)), heads);
        var mask = new MaskSpec(false, MaskKind.NONE, MaskKind.BOOL);
        Node p = g.attentionWeights(q, k, 0.25f, mask, null, pad);
        Node ctx = g.mergeHeads(g.matmul(p, v));
        Node h = g.add(x, g.linear(ctx, w(g, "wo", e, e), w(g, "bo", e)));
        Node f = g.linear(g.linear(h, w(g, "w1", 96, e), w(g, "b1", 96), true), w(g, "w2", e, 96), w(g, "b2", e));
        return g.build(g.add(f, h), p);
    }

    private Map<String, Tensor> inputs(Graph g) {
        Map<String, Tensor> in = new java.util.HashMap<>();
        for (var e : g.inputs().entrySet()) {
            Tensor t = Support.tensor(r, e.getValue().shape().dims());
            if (e.getKey().equals("pad")) for (int i = 0; i < t.size(); i++) t.data()[i] = i % 17 >= 13 ? 1f : 0f;
            in.put(e.getKey(), t);
        }
        return in;
    }

    private static List<String> names(Program p) {
        List<String> n = new ArrayList<>();
        for (Program.Step s : p.steps()) n.add(s.name());
        return n;
    }

    /** Runs {@code graph} by the CPU's program and one node at a time; asserts bitwise equality; returns the program. */
    private Program fusedEqualsUnfused(Graph graph, int threads) {
        Map<String, Tensor> in = inputs(graph);
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(threads));
                Executor fused = new Executor(be, graph);
                Executor plain = new Executor(be, Program.unfused(graph, be))) {
            List<Tensor> a = fused.run(in), b = plain.run(in);
            for (int i = 0; i < a.size(); i++)
                assertArrayEquals(b.get(i).data(), a.get(i).data(), "output " + i + " of " + fused.program());
            assertEquals(0, plain.program().fusedSteps());
            return fused.program();
        }
    }

    @Test
    void encoderLayerFusesEveryPatternAndEqualsTheUnfusedRunBitwise() {
        for (int threads : new int[] {1, 3}) {
            Program p = fusedEqualsUnfused(encoderLayer(new GraphBuilder()), threads);
            List<String> n = names(p);
            assertEquals(
                    3, n.stream().filter("MATMUL+ADD_BIAS+SPLIT_HEADS"::equals).count(), n.toString());
            assertEquals(1, n.stream().filter("MATMUL+SOFTMAX"::equals).count(), n.toString());
            assertEquals(2, n.stream().filter("MATMUL+ADD_BIAS+ADD"::equals).count(), n.toString());
            assertEquals(1, n.stream().filter("MATMUL+ADD_BIAS+RELU"::equals).count(), n.toString());
            assertEquals(
                    List.of("MATMUL", "MERGE_HEADS"),
                    n.stream().filter(s -> !s.contains("+")).toList());
        }
    }

    @Test
    void int8ProductEpilogueEqualsTheSeparateOpsBitwise() {
        // issue 37: QMATMUL -> ADD_BIAS -> [GELU] -> ADD, 300 rows (two row blocks), 70 columns (a partial block)
        for (String act : new String[] {"gelu", "relu", "none"}) {
            GraphBuilder g = new GraphBuilder();
            Node x = g.input("x", 1, 300, 200);
            byte[] q = new byte[200 * 70];
            for (int i = 0; i < q.length; i++) q[i] = (byte) (r.nextInt(256) - 128);
            float[] scale = new float[70];
            java.util.Arrays.fill(scale, 0.01f);
            Node y = g.addBias(
                    g.qmatmul(x, Tensor.ofInt8(q, 200, 70), scale, new byte[] {3}, new int[] {100, 200}),
                    w(g, "b", 70));
            if (act.equals("gelu")) y = g.gelu(y, false);
            if (act.equals("relu")) y = g.relu(y);
            Node res = g.input("r", y.shape().dims());
            Program p = fusedEqualsUnfused(g.build(g.add(res, y)), 2);
            assertEquals(
                    List.of("QMATMUL+ADD_BIAS" + (act.equals("none") ? "" : "+" + act.toUpperCase()) + "+ADD"),
                    names(p));
        }
    }

    /** int8 {@code (K, N)} weight values, zero points and scales for {@link #int8Layer}. */
    private Node int8Linear(GraphBuilder g, Node x, String name, int k, int n, int[] groups, Node padding) {
        byte[] q = new byte[k * n];
        for (int i = 0; i < q.length; i++) q[i] = (byte) (r.nextInt(256) - 128);
        float[] scale = new float[n];
        for (int j = 0; j < n; j++) scale[j] = 0.001f + 0.01f * r.nextFloat();
        return g.addBias(
                g.qmatmul(x, Tensor.ofInt8(q, k, n), scale, new byte[] {(byte) (r.nextInt(9) - 4)}, groups, padding),
                w(g, name, n));
    }

    /**
     * A quantized encoder layer as the {@code -q} models are imported: q, k and v int8 products of one LayerNorm's
     * output, split into heads; the output projection with its residual; a GELU feed-forward (width e, heads, f). With
     * {@code batch > 0} a padded batch (batch x len, one group per sequence, padding rows as {@link #inputs} marks
     * them); else a ragged one of {@code len} rows in two groups.
     */
    private Graph int8Layer(GraphBuilder g, int batch, int len, int e, int heads, int f) {
        boolean padded = batch > 0;
        Node x = padded ? g.input("x", batch, len, e) : g.input("x", 1, len, e);
        Node pad = padded ? g.input("pad", batch, len) : null;
        int[] groups = new int[] {len / 3, len - len / 3};
        if (padded) {
            groups = new int[batch];
            java.util.Arrays.fill(groups, len);
        }
        Node h = g.layerNorm(x, w(g, "g1", e), w(g, "b1", e), 1e-5f);
        Node q = g.splitHeads(int8Linear(g, h, "bq", e, e, groups, pad), heads);
        Node k = g.splitHeads(int8Linear(g, h, "bk", e, e, groups, pad), heads);
        Node v = g.splitHeads(int8Linear(g, h, "bv", e, e, groups, pad), heads);
        var mask = new MaskSpec(false, MaskKind.NONE, padded ? MaskKind.BOOL : MaskKind.NONE);
        Node p = g.attentionWeights(q, k, 0.25f, mask, null, pad);
        Node ctx = g.mergeHeads(g.matmul(p, v));
        Node a = g.add(h, int8Linear(g, ctx, "bo", e, e, groups, pad));
        Node ff = g.gelu(int8Linear(g, a, "bi", e, f, groups, pad), false);
        return g.build(g.add(a, int8Linear(g, ff, "bf", f, e, groups, pad)));
    }

    @Test
    void int8LayerSharesTheQuantizationAndSplitsHeadsBitwise() {
        // issue 37: q, k and v quantize their x once (QMatMul.Share), their products stored in the heads layout.
        // {batch (0: ragged), len, e, heads, f}: 40 rows run the direct path (QMatMul.FEW), 74 the panel path; 300
        // rows two row blocks, width 200 three whole column blocks and a partial one, heads of 40 that straddle
        // the 64-column blocks, and K = 600 past one exact chunk; padded 5 x 61 blocks that start mid-sequence
        int[][] cases = {
            {0, 40, 64, 4, 160}, {0, 74, 64, 4, 160}, {2, 37, 64, 4, 160}, {0, 300, 200, 5, 600}, {5, 61, 200, 5, 600}
        };
        for (int[] c : cases)
            for (int threads : new int[] {1, 3}) {
                Graph graph = int8Layer(new GraphBuilder(), c[0], c[1], c[2], c[3], c[4]);
                long taken = io.attn.cpu.ops.QMatMul.sharedTaken();
                Program p = fusedEqualsUnfused(graph, threads);
                assertEquals(2, io.attn.cpu.ops.QMatMul.sharedTaken() - taken, "k and v take q's quantization");
                List<String> n = names(p);
                assertEquals(
                        3,
                        n.stream()
                                .filter("QMATMUL+ADD_BIAS+SPLIT_HEADS"::equals)
                                .count(),
                        n.toString());
                assertEquals(
                        1, n.stream().filter("QMATMUL+ADD_BIAS+GELU"::equals).count(), n.toString());
                assertEquals(
                        2, n.stream().filter("QMATMUL+ADD_BIAS+ADD"::equals).count(), n.toString());
                var shares = io.attn.cpu.ops.Fusions.quantizationShares(graph);
                assertEquals(3, shares.size(), "q, k and v share; the others quantize their own x");
                assertEquals(1, new java.util.HashSet<>(shares.values()).size());
            }
    }

    @Test
    void aSharedQuantizationIsNotTakenFromAnotherRunOrInput() {
        // one executor, runs on different inputs one after another: each run's products must quantize that run's x
        // (the kept quantization belongs to the calling thread and outlives the run; here no other product
        // quantizes after the last of the three, so the next run's first finds it, for the same x array)
        GraphBuilder g = new GraphBuilder();
        Node x = g.layerNorm(g.input("x", 1, 50, 64), w(g, "g", 64), w(g, "b", 64), 1e-5f);
        int[] groups = {20, 30};
        Graph graph = g.build(g.add(
                g.add(int8Linear(g, x, "bq", 64, 64, groups, null), int8Linear(g, x, "bk", 64, 64, groups, null)),
                int8Linear(g, x, "bv", 64, 64, groups, null)));
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(2));
                Executor fused = new Executor(be, graph);
                Executor plain = new Executor(be, Program.unfused(graph, be))) {
            List<Map<String, Tensor>> in = new ArrayList<>();
            List<float[]> want = new ArrayList<>();
            for (int run = 0; run < 3; run++) {
                in.add(inputs(graph));
                want.add(plain.run(in.get(run)).get(0).data());
            }
            // the fused runs back to back: nothing else quantizes on this thread in between
            for (int run = 0; run < 3; run++)
                assertArrayEquals(want.get(run), fused.run(in.get(run)).get(0).data(), "run " + run);
        }
    }

    @Test
    void geluEpilogueEqualsTheGeluOpBitwise() {
        // 70 columns: two full 32-column panels and an edge with a partial vector; 2 rows: the Gemv path; K over 2048
        for (int[] dims : new int[][] {{3, 50, 65}, {2, 65}, {2, 9, 2100}})
            for (boolean tanh : new boolean[] {false, true}) {
                GraphBuilder g = new GraphBuilder();
                int k = dims[dims.length - 1];
                Node x = g.input("x", dims);
                Node y = g.gelu(g.linear(x, w(g, "w", 70, k), w(g, "b", 70)), tanh);
                Node res = g.input("r", y.shape().dims());
                Program p = fusedEqualsUnfused(g.build(g.add(res, y)), 2);
                assertEquals(List.of("MATMUL+ADD_BIAS+GELU+ADD"), names(p));
                g = new GraphBuilder();
                x = g.input("x", dims);
                Node noBias = g.gelu(g.matmul(x, w(g, "w", 70, k), false, true, 1f), tanh);
                assertEquals(List.of("MATMUL+GELU"), names(fusedEqualsUnfused(g.build(noBias), 1)));
            }
    }

    @Test
    void aValueReadTwiceOrReturnedIsNotFusedAway() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 3, 40, 65);
        Node y = g.addBias(g.matmul(x, w(g, "w", 70, 65), false, true, 1f), w(g, "b", 70));
        Node relu = g.relu(y);
        Program p = fusedEqualsUnfused(g.build(relu, y), 2); // y is an output: stored, so ReLU is a step of its own
        assertEquals(List.of("MATMUL+ADD_BIAS", "RELU"), names(p));

        g = new GraphBuilder();
        x = g.input("x", 3, 40, 65);
        Node prod = g.matmul(x, w(g, "w", 70, 65), false, true, 1f);
        Node both = g.add(g.relu(prod), g.gelu(prod, false)); // the product is read twice
        assertEquals(0, fusedEqualsUnfused(g.build(both), 2).fusedSteps());
    }

    /**
     * A task adapter run beside shared weights ({@code nn.Linear} with a LoRA pair): the low-rank sum is made before the
     * product, so the product adds it in its epilogue before what follows (the heads layout of q/k/v, a feed-forward's
     * activation and the residual after it); a fused q/k/v projection split in three makes {@code x A^T} once. Rows
     * {2, 9, 50} (2: the few-row path), K 40 and 2100 (past one K step), heads of 8 over 32-column panels.
     */
    @Test
    void aLowRankAdapterIsAddedInTheProductsEpilogue() {
        for (int[] c : new int[][] {{2, 9, 40}, {1, 2, 40}, {3, 50, 40}, {2, 9, 2100}})
            for (int threads : new int[] {1, 3}) {
                GraphBuilder g = new GraphBuilder();
                int e = c[2], rank = 4, heads = 5;
                Node x = g.input("x", c[0], c[1], e);
                io.attn.nn.Forward f = new io.attn.nn.Forward(g, io.attn.engine.AttentionWeights.NONE);
                var lora = new io.attn.nn.Linear.Lora(Support.tensor(r, rank, e), Support.tensor(r, 3 * e, rank));
                var qkv =
                        new io.attn.nn.Linear("qkv", Support.tensor(r, 3 * e, e), Support.tensor(r, 3 * e), null, lora);
                List<Node> out = new ArrayList<>();
                for (int i = 0; i < 3; i++)
                    out.add(qkv.outputs("p" + i, i * e, (i + 1) * e).forwardHeads(f, x, heads));
                // a feed-forward with its own adapter: GELU of the adapted product, then the residual
                var up = new io.attn.nn.Linear(
                        "up",
                        Support.tensor(r, 70, e),
                        Support.tensor(r, 70),
                        null,
                        new io.attn.nn.Linear.Lora(Support.tensor(r, rank, e), Support.tensor(r, 70, rank)));
                Node ff = up.forward(f, x);
                out.add(g.add(g.input("res", ff.shape().dims()), g.gelu(ff, false)));
                out.add(up.outputs("relu", 0, 70).forward(f, g.scale(x, 0.5f), true)); // and a ReLU after it
                Program p = fusedEqualsUnfused(g.build(out.toArray(Node[]::new)), threads);
                List<String> n = names(p);
                assertEquals(
                        3,
                        n.stream()
                                .filter("MATMUL+ADD_BIAS+ADD+SPLIT_HEADS"::equals)
                                .count(),
                        n.toString());
                assertEquals(
                        1,
                        n.stream()
                                .filter("MATMUL+ADD_BIAS+ADD+GELU+ADD"::equals)
                                .count(),
                        n.toString());
                assertEquals(
                        1, n.stream().filter("MATMUL+ADD_BIAS+ADD+RELU"::equals).count(), n.toString());
                assertEquals(
                        8,
                        n.stream().filter("MATMUL"::equals).count(),
                        "x A^T once for q/k/v and (x A^T) B^T each, two for each feed-forward: " + n);
            }
    }

    /**
     * Products of 1-4 rows (dot products where B is not packed) or 1-4 columns give bitwise the same fused and unfused: the
     * attention weights of 3 queries (the fused step's row blocks against the batched product), of 130 queries (a last
     * block of 2 rows), of 3 keys (q and k of rank 2 and 4), and a 4-column product split into 2 heads.
     */
    @Test
    void productsOfFewRowsOrColumnsEqualTheUnfusedRunBitwise() {
        var none = new MaskSpec(false, MaskKind.NONE, MaskKind.NONE);
        for (int[] c : new int[][] {{3, 40}, {130, 40}, {50, 3}, {3, 3}}) {
            int l = c[0], s = c[1];
            GraphBuilder g = new GraphBuilder();
            Node p4 = g.attentionWeights(g.input("q", 2, 3, l, 16), g.input("k", 2, 3, s, 16), 0.25f, none, null, null);
            Node p2 = g.attentionWeights(g.input("q2", l, 16), g.input("k2", s, 16), 0.25f, none, null, null);
            List<String> n = names(fusedEqualsUnfused(g.build(p4, p2), 2));
            assertEquals(2, n.stream().filter("MATMUL+SOFTMAX"::equals).count(), n.toString());
        }
        for (int rows : new int[] {3, 50}) {
            GraphBuilder g = new GraphBuilder();
            Node x = g.input("x", 1, rows, 40);
            Node y = g.splitHeads(g.linear(x, w(g, "w", 4, 40), w(g, "b", 4)), 2);
            assertEquals(List.of("MATMUL+ADD_BIAS+SPLIT_HEADS"), names(fusedEqualsUnfused(g.build(y), 2)));
        }
    }

    @Test
    void aResidualComputedAfterTheProductIsNotFused() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 9, 32);
        Node y = g.linear(x, w(g, "w", 32, 32), w(g, "b", 32));
        Node later = g.gelu(x, true); // computed after the product: the step at the product's place cannot read it
        Program p = fusedEqualsUnfused(g.build(g.add(y, later)), 1);
        assertEquals(List.of("MATMUL+ADD_BIAS", "GELU", "ADD"), names(p));
    }

    /** x -> a = relu(x) -> b = gelu(a) -> c = a + b: a is read twice. */
    private record Diamond(Graph graph, Node x, Node a, Node b, Node c) {
        static Diamond make() {
            GraphBuilder g = new GraphBuilder();
            Node x = g.input("x", 4, 8);
            Node a = g.relu(x);
            Node b = g.gelu(a, false);
            Node c = g.add(a, b);
            return new Diamond(g.build(c), x, a, b, c);
        }
    }

    @Test
    void aProgramThatFusesAwayAValueReadElsewhereIsRefused() {
        Diamond dm = Diamond.make();
        Graph graph = dm.graph();
        Node x = dm.x(), a = dm.a(), b = dm.b(), c = dm.c();
        Program.Kernel none = (out, in, scratch) -> {};
        var bad = List.of(
                new Program.Step("RELU+GELU", List.of(a, b), List.of(x), 0, -1, none),
                new Program.Step("ADD", List.of(c), List.of(a, b), 0, -1, none));
        var e = assertThrows(IllegalArgumentException.class, () -> new Program(graph, bad));
        assertTrue(e.getMessage().contains("is fused into RELU+GELU"), e.getMessage());
        var missing = List.of(new Program.Step("ADD", List.of(c), List.of(a, b), 0, -1, none));
        assertThrows(IllegalArgumentException.class, () -> new Program(graph, missing));
    }

    @Test
    void scratchGetsASlotApartFromTheStepsInputsAndOutput() {
        Diamond dm = Diamond.make();
        Graph graph = dm.graph();
        Node a = dm.a(), b = dm.b(), c = dm.c();
        Program.Kernel none = (out, in, scratch) -> {};
        var b2 = new Program.Builder(graph);
        b2.add(Program.Step.of(a, 0, none));
        b2.add(Program.Step.of(b, 1000, none));
        b2.add(Program.Step.of(c, 0, none));
        BufferPlan plan = new BufferPlan(b2.build());
        int s = plan.scratchOf(1);
        assertTrue(s >= 0 && plan.slotSizes()[s] >= 1000);
        assertNotEquals(plan.slotOf(a), s);
        assertNotEquals(plan.slotOf(b), s);
        assertEquals(-1, plan.scratchOf(0));
    }
}
