package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Buffer;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.kernels.Kernel;
import io.attn.kernels.Kernels;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Runs {@link CudaBackend}'s op switch without a GPU: launches go to a recorder that checks each one against the
 * committed PTX (entry exists, argument count and types equal the {@code .param} list, grid and block within CUDA's
 * limits) and GEMMs go to a recorder that checks the row-major leading dimensions. Buffers carry made-up addresses
 * so the tests can see which buffer went where. What the kernels compute is checked on a GPU, not here.
 */
class LaunchArgumentsTest {
    /** The kernels' value for an open side of the sliding window (MaskSpec.left / right): 2^30 - 1. */
    private static final int OPEN = Integer.MAX_VALUE / 2;

    record Launch(Kernel entry, int gx, int gy, int gz, int threads, int smem, List<Number> values) {}

    record Gemm(
            boolean ta,
            boolean tb,
            int m,
            int n,
            int k,
            float alpha,
            long a,
            int lda,
            long sa,
            long b,
            int ldb,
            long sb,
            long c,
            int ldc,
            long sc,
            int batch) {}

    static final class Recorder implements OpSink, Blas {
        final List<Launch> launches = new ArrayList<>();
        final List<Gemm> gemms = new ArrayList<>();
        long nextScratch = 0x900000;

        @Override
        public void launch(Kernel entry, int gx, int gy, int gz, int threads, int smem, KernelArgs args) {
            assertEquals(Kernels.params(entry), args.types(), entry + " argument types");
            assertTrue(gx >= 1 && gy >= 1 && gy <= 65535 && gz >= 1 && gz <= 65535, entry + " grid");
            assertTrue(threads >= 32 && threads <= 1024 && threads % 32 == 0, entry + " block " + threads);
            assertTrue(smem >= 0 && smem <= 227 * 1024, entry + " dynamic shared memory " + smem);
            launches.add(new Launch(entry, gx, gy, gz, threads, smem, List.copyOf(args.values())));
        }

        @Override
        public void zero(DevPtr p, long n) {}

        @Override
        public CudaBuffer allocate(DType dtype, long elements) {
            long a = nextScratch;
            nextScratch += 0x100000;
            return new CudaBuffer(DevPtr.fake(a), dtype, elements, null);
        }

        @Override
        public void upload(float[] src, int count, CudaBuffer dst) {}

        @Override
        public void upload16(short[] src, CudaBuffer dst) {}

        @Override
        public void upload8(byte[] src, CudaBuffer dst) {}

        @Override
        public void download(CudaBuffer src, float[] dst, int count, String after) {}

        @Override
        public void sync(String after) {}

        @Override
        public long errorWord() {
            return 0xE0;
        }

        @Override
        public int takeError(String after) {
            return 0;
        }

        @Override
        public String description() {
            return "recorder";
        }

        @Override
        public void sgemm(
                boolean ta,
                boolean tb,
                int m,
                int n,
                int k,
                float alpha,
                DevPtr a,
                int lda,
                long sa,
                DevPtr b,
                int ldb,
                long sb,
                float beta,
                DevPtr c,
                int ldc,
                long sc,
                int batch) {
            // row-major leading dimensions: A is (m x k) or stored (k x m); B is (k x n) or stored (n x k)
            assertTrue(lda >= (ta ? m : k) && ldb >= (tb ? k : n) && ldc >= n, "leading dimensions");
            gemms.add(new Gemm(
                    ta, tb, m, n, k, alpha, a.address(), lda, sa, b.address(), ldb, sb, c.address(), ldc, sc, batch));
        }

        @Override
        public void close() {}
    }

    final Recorder rec = new Recorder();
    final Map<Node, Buffer> bufs = new HashMap<>();
    long next = 0x1000;

    /** Runs the backend's program for the graph (every computed node, with its fusions) without a device. */
    void run(GraphBuilder g, Node out, boolean fused) {
        run(g, out, fused ? "fused" : "unfused", Precision.FP32, 90);
    }

    void run(GraphBuilder g, Node out, String attention, Precision precision, int capability) {
        run(g, out, attention == null ? Map.of() : Map.of("attention", attention), precision, capability);
    }

    /** The same with option flash.variant = {@code variant} (null: unset). */
    void run(GraphBuilder g, Node out, String attention, String variant, Precision precision, int capability) {
        Map<String, String> extra = new java.util.HashMap<>();
        if (attention != null) extra.put("attention", attention);
        if (variant != null) extra.put("flash.variant", variant);
        run(g, out, extra, precision, capability);
    }

    void run(GraphBuilder g, Node out, Map<String, String> extra, Precision precision, int capability) {
        try (CudaBackend be = new CudaBackend(rec, rec, extra, precision, capability)) {
            var graph = g.build(out);
            for (Node n : graph.nodes()) {
                bufs.put(
                        n,
                        new CudaBuffer(DevPtr.fake(next), DType.F32, n.shape().size(), null));
                next += 0x10000;
                if (!n.isLeaf()) assertTrue(be.supports(n));
            }
            for (var step : be.compile(graph).steps()) {
                Buffer[] in = step.inputs().stream().map(bufs::get).toArray(Buffer[]::new);
                Buffer scratch = null;
                if (step.scratch() > 0) {
                    scratch = new CudaBuffer(DevPtr.fake(next), DType.F32, step.scratch(), null);
                    next += 0x10000;
                }
                step.kernel().run(bufs.get(step.output()), in, scratch);
            }
        }
    }

    long addr(Node n) {
        return ((CudaBuffer) bufs.get(n)).ptr().address();
    }

    @Test
    void everyOpLaunchesKernelsThatMatchThePtx() {
        GraphBuilder g = new GraphBuilder();
        Set<Op> seen = EnumSet.noneOf(Op.class);
        Node ids = g.input("ids", 2, 3);
        Node table = g.constant("table", Tensor.zeros(10, 8));
        Node x = g.positionalEncoding(g.embedding(ids, table), 4);
        Node ln = g.layerNorm(x, g.constant("w", Tensor.zeros(8)), g.constant("b", Tensor.zeros(8)), 1e-5f);
        Node lin = g.addBias(
                g.matmul(ln, g.constant("W", Tensor.zeros(8, 8)), false, true, 1f), g.constant("bb", Tensor.zeros(8)));
        Node fused = g.linear(lin, g.constant("W2", Tensor.zeros(8, 8)), g.constant("bb2", Tensor.zeros(8)), true);
        Node h = g.gelu(fused, false); // MATMUL + ADD_BIAS fused, then MATMUL + ADD_BIAS + RELU fused, then GELU
        Node r = g.silu(g.relu(g.gelu(g.scale(g.add(h, x), 0.5f), true)));
        // a residual (add_f32) and a projection split into heads (split_heads_f32)
        r = g.add(r, g.linear(r, g.constant("W3", Tensor.zeros(8, 8)), g.constant("bb3", Tensor.zeros(8))));
        Node qp =
                g.splitHeads(g.linear(r, g.constant("W4", Tensor.zeros(8, 8)), g.constant("bb4", Tensor.zeros(8))), 2);
        Node q = g.splitHeads(r, 2); // (2, 2, 3, 4)
        g.add(r, g.mergeHeads(qp)); // not read: run() executes every node
        Node sc = g.softmax(g.matmul(q, q, false, true, 1f)); // unmasked softmax of scores
        Node att = g.attention(q, q, q, Float.NaN, MaskSpec.CAUSAL, null, null);
        Node m = g.mergeHeads(g.add(att, g.matmul(sc, q)));
        Node c = g.concat(1, m, m); // (2, 6, 8)
        Node out = g.mean(c, 1);
        g.cacheWrite(g.input("cache", 2, 2, 5, 4), q, g.input("pos", 1)); // not read: run() executes every node
        // the ops of the rotary / gated families (not read either): RMSNorm, rope by range, start and ids, GLU
        g.rmsNorm(r, g.constant("rw", Tensor.zeros(8)), 1e-6f);
        g.rope(q, 10000f, 2, 3);
        g.rope(q, g.input("rope_start", 1), 1e6f, 4, 0);
        g.rope(q, g.input("rope_ids", 2, 3), 1e6f, 4, 0);
        g.glu(r, io.attn.graph.OpParams.Glu.Activation.SILU, true);
        // the int8 ops (issue 37): a padded batch's product with its mask, and a table lookup (not read either)
        g.qmatmul(
                r,
                Tensor.ofInt8(new byte[64], 8, 8),
                new float[] {1f},
                new byte[1],
                new int[] {3, 3},
                g.input("padding", 2, 3));
        g.qembedding(ids, Tensor.ofInt8(new byte[80], 10, 8), 1f, 0);
        // a ragged batch's attention (sequences of 1 and 2): padded copies in, the padded attention, the rows back
        Node rq = g.input("ragged_q", 1, 2, 3, 4);
        g.attention(rq, rq, rq, Float.NaN, MaskSpec.segments(false, 1, 2), null, null);
        run(g, out, false);
        for (Node n : g.build(out).nodes()) seen.add(n.op());
        assertEquals(EnumSet.allOf(Op.class), seen, "the graph covers every op");
        Set<Kernel> entries = EnumSet.noneOf(Kernel.class);
        for (Launch l : rec.launches) entries.add(l.entry());
        // every kernel but the fused / flash attention and the GEMM fallback (Blas is recorded separately here)
        Set<Kernel> all = EnumSet.allOf(Kernel.class);
        all.removeAll(List.of(Kernel.ATTENTION_F32, Kernel.GEMM_F32));
        all.removeAll(Kernel.in("flash_attention"));
        all.removeAll(Kernel.in("flash_attention_bf16"));
        all.removeAll(Kernel.in("flash_attention_fa2"));
        all.removeAll(Kernel.in("flash_attention_tf32"));
        all.removeAll(Kernel.in("convert")); // cuDNN's attention only (attention=cudnn, on a device)
        assertEquals(all, entries);
    }

    @Test
    void aRaggedAttentionRunsAsPaddedGroupsOfSimilarLengths() {
        // lengths 70, 1, 13, 64, 2 at rows 0, 70, 71, 84, 148: longest first, a group closed before its padded rows
        // pass 5/4 of its real ones + 64: {70, 64, 13} (210 padded rows for 147), then {2, 1}
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 2, 150, 8);
        Node att = g.attention(q, q, q, Float.NaN, MaskSpec.segments(true, 70, 1, 13, 64, 2), null, null);
        List<io.attn.cuda.ops.Attention.Group> groups = io.attn.cuda.ops.Attention.groups(att);
        assertEquals(2, groups.size());
        assertEquals(List.of(3, 70), List.of(groups.get(0).n(), groups.get(0).lp()));
        org.junit.jupiter.api.Assertions.assertArrayEquals(
                new float[] {0, 70, 84, 64, 71, 13}, groups.get(0).seqs());
        org.junit.jupiter.api.Assertions.assertArrayEquals(
                new float[] {148, 2, 70, 1}, groups.get(1).seqs());
        // each group's padded node: its sequences' rows, causal, the padding of the shorter ones masked
        Node padded = groups.get(1).padded();
        assertEquals(io.attn.tensor.Shape.of(2, 2, 2, 8), padded.input(0).shape());
        MaskSpec pm = padded.params(io.attn.graph.OpParams.Attention.class).mask();
        assertTrue(pm.causal() && !pm.segmented() && pm.keyPadding() == io.attn.graph.MaskKind.BOOL, pm.toString());
        org.junit.jupiter.api.Assertions.assertArrayEquals(
                new float[] {0, 0, 0, 1}, groups.get(1).keyPadding());
        assertEquals(null, CudaBackend.unsupported(att));
        // option ragged=off declines it (the embedder then pads); a bad value is one line naming the option
        try (CudaBackend off =
                new CudaBackend(rec, rec, Map.of(CudaBackend.RAGGED_OPTION, "off"), Precision.FP32, 90)) {
            assertTrue(!off.supports(att) && off.description().contains("ragged batches off"), off.description());
        }
        io.attn.AttnException bad = assertThrows(
                io.attn.AttnException.class,
                () -> new CudaBackend(rec, rec, Map.of(CudaBackend.RAGGED_OPTION, "maybe"), Precision.FP32, 90));
        assertTrue(bad.getMessage().contains("ragged=maybe: expected on or off"), bad.getMessage());
        Node two = g.attention(
                g.input("q2", 2, 2, 3, 8),
                g.input("k2", 2, 2, 3, 8),
                g.input("v2", 2, 2, 3, 8),
                Float.NaN,
                MaskSpec.segments(false, 1, 2),
                null,
                null);
        assertTrue(CudaBackend.unsupported(two).contains("2 batch rows"), CudaBackend.unsupported(two));
    }

    @Test
    void int8ProductsOfRaggedGroupsRunOnTheDevice() {
        // a ragged batch's sequences (row groups of different sizes) as a padded batch's equal ones; an overflowing K
        // stays the CPU's
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 1, 7, 8);
        Tensor w = Tensor.ofInt8(new byte[64], 8, 8);
        assertEquals(null, CudaBackend.unsupported(g.qmatmul(x, w, new float[] {1f}, new byte[1], new int[] {7})));
        assertEquals(null, CudaBackend.unsupported(g.qmatmul(x, w, new float[] {1f}, new byte[1], new int[] {3, 4})));
        Node big = g.input("big", 1, 40000);
        String why = CudaBackend.unsupported(
                g.qmatmul(big, Tensor.ofInt8(new byte[40000], 40000, 1), new float[] {1f}, new byte[1], null));
        assertTrue(why != null && why.contains("overflow"), why);
    }

    @Test
    void meanOverTheLastAxisRunsAWarpPerRow() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 5, 8, 45);
        Node last = g.mean(x, 2);
        run(g, last, false);
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.MEAN_F32, l.entry());
        assertEquals(5, l.gx()); // 40 rows x 32 lanes / 256 threads
        assertEquals(256, l.threads());
        assertEquals(List.<Number>of(addr(x), addr(last), 40, 45, 1), l.values());
        // another axis: a thread per output
        rec.launches.clear();
        g = new GraphBuilder();
        x = g.input("x", 5, 8, 45);
        Node mid = g.mean(x, 1);
        run(g, mid, false);
        l = rec.launches.getFirst();
        assertEquals(1, l.gx()); // 225 outputs / 256 threads
        assertEquals(List.<Number>of(addr(x), addr(mid), 5, 8, 45), l.values());
    }

    @Test
    void softmaxMaskStridesFollowBroadcastDims() {
        GraphBuilder g = new GraphBuilder();
        Node s = g.input("s", 2, 3, 4, 5); // B=2, H=3, L=4, S=5
        Node mask = g.input("m", 2, 1, 4, 5); // per batch, shared by heads
        Node kpm = g.input("k", 2, 5);
        Node y = g.softmax(s, 0.25f, new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE), mask, kpm);
        run(g, y, false);
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.SOFTMAX_F32, l.entry());
        assertEquals(2 * 3 * 4, l.gx()); // one block per row
        // x, y, H, L, S, scale, causal, mask, maskKind, strideB, strideH, kpm, kpmKind
        assertEquals(
                List.<Number>of(addr(s), addr(y), 3, 4, 5, 0.25f, 1, addr(mask), 1, 20, 0, addr(kpm), 2, OPEN, 0),
                l.values());
    }

    @Test
    void attentionWeightsAreGemmIntoTheOutputThenSoftmaxInPlace() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 3, 4, 8), k = g.input("k", 2, 3, 5, 8);
        Node kpm = g.input("p", 2, 5);
        Node w = g.attentionWeights(q, k, 0.5f, new MaskSpec(true, MaskKind.NONE, MaskKind.BOOL), null, kpm);
        run(g, w, false);
        assertEquals(1, rec.gemms.size());
        // scores (L x S) = Q (L x D) . K^T, K stored (S x D); B*H batches, straight into the output
        assertEquals(
                new Gemm(false, true, 4, 5, 8, 1f, addr(q), 8, 32, addr(k), 8, 40, addr(w), 5, 20, 6),
                rec.gemms.getFirst());
        Launch sm = rec.launches.getFirst();
        assertEquals(Kernel.SOFTMAX_F32, sm.entry());
        // in place; masks are the node's third input on: x, y, H, L, S, scale, causal, mask, kind, strides, kpm, kind
        assertEquals(
                List.<Number>of(addr(w), addr(w), 3, 4, 5, 0.5f, 1, 0L, 0, 0, 0, addr(kpm), 1, OPEN, 0), sm.values());
    }

    @Test
    void unfusedAttentionIsGemmSoftmaxGemmOnScratch() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 3, 4, 8), k = g.input("k", 2, 3, 5, 8), v = g.input("v", 2, 3, 5, 6);
        Node mask = g.input("m", 4, 5);
        Node o = g.attention(q, k, v, 0.5f, new MaskSpec(false, MaskKind.ADDITIVE, MaskKind.NONE), mask, null);
        run(g, o, false);
        assertEquals(2, rec.gemms.size());
        Gemm s = rec.gemms.get(0), pv = rec.gemms.get(1);
        long scratch = s.c();
        // scores (L x S) = Q (L x D) . K^T, K stored (S x D); B*H batches
        assertEquals(new Gemm(false, true, 4, 5, 8, 1f, addr(q), 8, 32, addr(k), 8, 40, scratch, 5, 20, 6), s);
        assertEquals(new Gemm(false, false, 4, 6, 5, 1f, scratch, 5, 20, addr(v), 6, 30, addr(o), 6, 24, 6), pv);
        Launch sm = rec.launches.getFirst();
        assertEquals(
                List.<Number>of(scratch, scratch, 3, 4, 5, 0.5f, 0, addr(mask), 2, 0, 0, 0L, 0, OPEN, OPEN),
                sm.values());
    }

    /**
     * Grouped-query attention: every path passes the K/V heads after H, and the unfused path runs its GEMMs over B *
     * Hkv batches of (H / Hkv) * L query rows (the query heads of one K/V head are consecutive), K/V read in place.
     */
    @Test
    void groupedQueryAttentionPassesTheKvHeadsAndBatchesTheGemmsByKvHead() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 6, 4, 8), k = g.input("k", 2, 2, 5, 8), v = g.input("v", 2, 2, 5, 6);
        Node o = g.attention(q, k, v, 0.5f, MaskSpec.CAUSAL, null, null);
        run(g, o, false);
        Gemm s = rec.gemms.get(0), pv = rec.gemms.get(1);
        long scratch = s.c();
        // scores: B*Hkv = 4 batches of (3*4 = 12) x 5, Q rows of 3 heads each; K (5 x 8) per K/V head
        assertEquals(new Gemm(false, true, 12, 5, 8, 1f, addr(q), 8, 96, addr(k), 8, 40, scratch, 5, 60, 4), s);
        assertEquals(new Gemm(false, false, 12, 6, 5, 1f, scratch, 5, 60, addr(v), 6, 30, addr(o), 6, 72, 4), pv);
        rec.launches.clear();
        rec.gemms.clear();
        run(g, o, true);
        assertEquals(Kernel.ATTENTION_F32, rec.launches.getFirst().entry());
        assertEquals(
                List.<Number>of(
                        addr(q), addr(k), addr(v), addr(o), 2, 6, 2, 4, 5, 8, 6, 0.5f, 1, 0L, 0, 0, 0, 0L, 0, OPEN, 0),
                rec.launches.getFirst().values());
        // bf16 FA2: only the Hkv heads of k and v are converted
        GraphBuilder g2 = new GraphBuilder();
        Node q2 = g2.input("q", 1, 8, 70, 64), k2 = g2.input("k", 1, 1, 50, 64);
        Node o2 = g2.attention(q2, k2, k2, Float.NaN, MaskSpec.NONE, null, null);
        rec.launches.clear();
        run(g2, o2, "flash", Precision.BF16, 80);
        assertEquals(
                List.of(8L * 70 * 64, 50L * 64, 50L * 64),
                rec.launches.subList(0, 3).stream().map(c -> c.values().get(2)).toList());
        assertEquals(8, rec.launches.get(3).values().get(5)); // H
        assertEquals(1, rec.launches.get(3).values().get(6)); // HKV
        assertEquals(
                Attention.sixteenBitScratch(1, 8, 1, 70, 50, 64),
                Attention.scratch(
                        Attention.Path.FLASH,
                        Precision.BF16,
                        80,
                        null,
                        g2.build(o2).nodes().getLast()));
    }

    @Test
    void fusedAttentionPassesShapesAndMasks() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 3, 4, 8), k = g.input("k", 2, 3, 5, 8), v = g.input("v", 2, 3, 5, 6);
        Node kpm = g.input("p", 2, 5);
        Node o = g.attention(q, k, v, 0.5f, new MaskSpec(true, MaskKind.NONE, MaskKind.BOOL), null, kpm);
        run(g, o, true);
        assertEquals(0, rec.gemms.size());
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.ATTENTION_F32, l.entry());
        assertEquals(6, l.gx()); // 24 rows, 4 per block of 128 threads
        assertEquals(
                List.<Number>of(
                        addr(q), addr(k), addr(v), addr(o), 2, 3, 3, 4, 5, 8, 6, 0.5f, 1, 0L, 0, 0, 0, addr(kpm), 1,
                        OPEN, 0),
                l.values());
    }

    @Test
    void slidingWindowSidesFollowTheMasks() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 2, 70, 64), k = g.input("k", 1, 2, 70, 64), v = g.input("v", 1, 2, 70, 64);
        // ModernBERT's local layers: |i - j| <= 4; the SIMT flash kernel, the tf32 one (the fp32 default) and fused
        Node o = g.attention(q, k, v, 0.5f, MaskSpec.NONE.window(4, 4), null, null);
        run(g, o, Map.of("attention", "flash", "flash.fp32", "simt"), Precision.FP32, 90);
        assertEquals(Kernel.FLASH_F32_D64, rec.launches.getFirst().entry());
        assertEquals(List.<Number>of(4, 4), rec.launches.getFirst().values().subList(17, 19));
        rec.launches.clear();
        run(g, o, Map.of("attention", "flash"), Precision.FP32, 90);
        assertEquals(List.<Number>of(4, 4), rec.launches.getFirst().values().subList(17, 19));
        // Mistral's causal window of 16: left 15, right capped at 0 by causal; an open side is 2^30 - 1
        GraphBuilder g2 = new GraphBuilder();
        Node q2 = g2.input("q", 1, 2, 70, 64), k2 = g2.input("k", 1, 2, 70, 64), v2 = g2.input("v", 1, 2, 70, 64);
        Node o2 = g2.attention(q2, k2, v2, 0.5f, MaskSpec.CAUSAL.window(15, MaskSpec.UNBOUNDED), null, null);
        rec.launches.clear();
        run(g2, o2, true);
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.ATTENTION_F32, l.entry());
        assertEquals(List.<Number>of(15, 0), l.values().subList(19, 21));
    }

    @Test
    void flashAttentionPassesShapesMasksAndTheTileGrid() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 3, 70, 64), k = g.input("k", 2, 3, 5, 64), v = g.input("v", 2, 3, 5, 64);
        Node mask = g.input("m", 2, 1, 70, 5), kpm = g.input("p", 2, 5);
        Node o = g.attention(q, k, v, 0.5f, new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE), mask, kpm);
        run(g, o, Map.of("attention", "flash", "flash.fp32", "simt"), Precision.FP32, 90); // the SIMT kernel
        assertEquals(0, rec.gemms.size());
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.FLASH_F32_D64, l.entry());
        assertEquals(2 * 3 * 3, l.gx()); // ceil(70 / 32) query tiles per (b, h)
        assertEquals(128, l.threads());
        // q, k, v, o, B, H, HKV, L, S, scale, causal, mask, kind, strideB (H broadcast: 1 * L * S), strideH, kpm, kind
        assertEquals(
                List.<Number>of(
                        addr(q),
                        addr(k),
                        addr(v),
                        addr(o),
                        2,
                        3,
                        3,
                        70,
                        5,
                        0.5f,
                        1,
                        addr(mask),
                        1,
                        350,
                        0,
                        addr(kpm),
                        2,
                        OPEN,
                        0),
                l.values());
        rec.launches.clear();
        // bf16 on sm_80: q, k, v converted to 16 bits into the planned scratch, then the default FA2 kernel
        run(g, o, "flash", Precision.BF16, 80);
        assertEquals(4, rec.launches.size());
        long q16 = 0, k16 = 0, v16 = 0;
        long[] n = {2L * 3 * 70 * 64, 2L * 3 * 5 * 64, 2L * 3 * 5 * 64};
        Node[] in = {q, k, v};
        for (int i = 0; i < 3; i++) {
            Launch c = rec.launches.get(i);
            assertEquals(Kernel.F32_TO_BF16, c.entry());
            assertEquals(256, c.threads());
            assertEquals(0, c.smem());
            assertEquals((int) ((n[i] + 1023) / 1024), c.gx());
            assertEquals(addr(in[i]), c.values().get(0));
            assertEquals(n[i], c.values().get(2));
            long at = c.values().get(1).longValue();
            if (i == 0) q16 = at;
            else if (i == 1) k16 = at;
            else v16 = at;
        }
        assertEquals(q16 + 2 * n[0], k16); // q, k, v back to back in one scratch buffer, 16-byte aligned
        assertEquals(k16 + 2 * n[1], v16);
        assertEquals(0, q16 % 16);
        l = rec.launches.get(3);
        assertEquals(Kernel.FA2_BF16_D64_BR128_W4, l.entry());
        assertEquals(2 * 3 * 1, l.gx()); // ceil(70 / 128)
        assertEquals(128, l.threads());
        assertEquals(2 * (128 * 64 + 4 * 64 * 64), l.smem());
        assertEquals(
                List.<Number>of(
                        q16, k16, v16, addr(o), 2, 3, 3, 70, 5, 0.5f, 1, addr(mask), 1, 350, 0, addr(kpm), 2, OPEN, 0),
                l.values());
        rec.launches.clear();
        // the older tensor-core kernel stays reachable by name (fp32 inputs, no conversion, static shared memory)
        run(g, o, "flash", "flash_bf16_d64", Precision.BF16, 80);
        assertEquals(1, rec.launches.size());
        l = rec.launches.getFirst();
        assertEquals(Kernel.FLASH_BF16_D64, l.entry());
        assertEquals(2 * 3 * 2, l.gx()); // ceil(70 / 64)
        assertEquals(0, l.smem());
        rec.launches.clear();
        // every FA2 entry of D = 64 at fp16 by name: its grid, block and dynamic shared memory
        for (Attention.Variant va : Attention.VARIANTS) {
            if (!va.in16() || va.d() != 64 || va.precision() != Precision.FP16) continue;
            run(g, o, "flash", va.kernel().entry(), Precision.FP16, 90);
            assertEquals(Kernel.F32_TO_F16, rec.launches.getFirst().entry());
            l = rec.launches.getLast();
            assertEquals(va.kernel(), l.entry());
            assertEquals(2 * 3 * ((70 + va.rows() - 1) / va.rows()), l.gx());
            assertEquals(va.threads(), l.threads());
            assertEquals(va.smem(), l.smem());
            rec.launches.clear();
        }
    }

    @Test
    void fa2VariantsTheirGeometryAndTheOption() throws Exception {
        // the Java table, the kernel file's entries and attention_variants.json agree
        String json;
        try (var in = Kernels.class.getResourceAsStream("attention_variants.json")) {
            json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        for (Attention.Variant v : Attention.VARIANTS) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                            "\\{\"entry\": \"" + v.kernel().entry()
                                    + "\"[^}]*\"d\": (\\d+), \"br\": (\\d+)[^}]*\"threads\": (\\d+), \"smem\": (\\d+)")
                    .matcher(json);
            assertTrue(m.find(), v.kernel().entry() + " in attention_variants.json");
            assertEquals(
                    List.of(v.d(), v.rows(), v.threads(), v.smem()),
                    List.of(
                            Integer.parseInt(m.group(1)),
                            Integer.parseInt(m.group(2)),
                            Integer.parseInt(m.group(3)),
                            Integer.parseInt(m.group(4))),
                    v.kernel().entry());
            assertTrue(v.smem() <= 227 * 1024, v + ": more shared memory than an sm_80 / sm_90 block may have");
            assertEquals(80, v.kernel().minCapability());
            assertEquals(19, Kernels.params(v.kernel()).size(), v.kernel().entry() + " parameters");
        }
        for (Kernel k : Kernel.in("flash_attention_fa2"))
            if (k != Kernel.F32_TO_BF16 && k != Kernel.F32_TO_F16)
                assertTrue(Attention.variant(k) != null, k + " is in Attention.VARIANTS");
        assertEquals(List.of("u64", "u64", "u64"), Kernels.params(Kernel.F32_TO_BF16));
        assertTrue(json.contains("{\"entry\": \"f32_to_bf16\"") && json.contains("{\"entry\": \"f32_to_f16\""));
        // defaults, and where the 16-bit kernels apply
        assertEquals(
                Kernel.FA2_BF16_D64_BR128_W4,
                Attention.sixteenBit(Precision.BF16, 80, 64, 64, null).kernel());
        assertEquals(
                Kernel.FA2_F16_D128_BR128_W8,
                Attention.sixteenBit(Precision.FP16, 90, 128, 128, null).kernel());
        assertEquals(null, Attention.sixteenBit(Precision.BF16, 75, 64, 64, null));
        assertEquals(null, Attention.sixteenBit(Precision.FP32, 90, 64, 64, null));
        assertEquals(null, Attention.sixteenBit(Precision.BF16, 90, 32, 32, null));
        assertEquals(null, Attention.sixteenBit(Precision.BF16, 90, 64, 32, null));
        // the option: known entries of the backend's precision; anything else is one line naming the valid ones
        assertEquals(Kernel.FA2_F16_D64_BR64_W4, Attention.parseVariant(" fa2_f16_d64_br64_w4 ", Precision.FP16));
        assertEquals(Kernel.FLASH_BF16_D128, Attention.parseVariant("flash_bf16_d128", Precision.BF16));
        var bad = assertThrows(io.attn.AttnException.class, () -> Attention.parseVariant("fa2_fast", Precision.BF16));
        assertTrue(
                bad.getMessage().contains("flash.variant=fa2_fast")
                        && bad.getMessage().contains("fa2_bf16_d64_br128_w8")
                        && !bad.getMessage().contains("\n"),
                bad.getMessage());
        assertThrows(io.attn.AttnException.class, () -> Attention.parseVariant("fa2_f16_d64_br64_w4", Precision.BF16));
        assertThrows(
                io.attn.AttnException.class,
                () -> new CudaBackend(rec, rec, Map.of("flash.variant", "nope"), Precision.BF16, 80),
                "a bad flash.variant fails when the backend opens");
        var dim = assertThrows(
                io.attn.AttnException.class,
                () -> Attention.sixteenBit(Precision.BF16, 80, 128, 128, Kernel.FA2_BF16_D64_BR64_W4));
        assertTrue(dim.getMessage().contains("head dim 64"), dim.getMessage());
        // converter geometry: 1024 values per block and step, at most 65535 blocks, at least 1
        assertEquals(1, Attention.convertBlocks(1));
        assertEquals(2, Attention.convertBlocks(1025));
        assertEquals(65535, Attention.convertBlocks(1L << 40));
    }

    @Test
    void fa2FallsBackToTheFp32KernelForAMisalignedOutput() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 2, 20, 64);
        Node o = g.attention(q, q, q, Float.NaN, MaskSpec.NONE, null, null);
        Node att = g.build(o).nodes().getLast();
        CudaBuffer[] x = new CudaBuffer[3];
        for (int i = 0; i < 3; i++) x[i] = new CudaBuffer(DevPtr.fake(0x10000 * (i + 1)), DType.F32, 2560, null);
        CudaBuffer y = new CudaBuffer(DevPtr.fake(0x50004), DType.F32, 2560, null); // 4-byte aligned only
        CudaStream st = new CudaStream(rec, rec);
        Attention.run(
                st, Attention.Path.FLASH, Attention.Fp32Choice.DEFAULT, Precision.BF16, 80, null, att, y, x, null);
        assertEquals(
                List.of(Kernel.FLASH_F32_D64),
                rec.launches.stream().map(Launch::entry).toList());
        rec.launches.clear();
        Attention.run(
                st,
                Attention.Path.FLASH,
                Attention.Fp32Choice.DEFAULT,
                Precision.BF16,
                80,
                Kernel.FLASH_BF16_D64,
                att,
                y,
                x,
                null);
        assertEquals(
                List.of(Kernel.FLASH_F32_D64),
                rec.launches.stream().map(Launch::entry).toList());
    }

    @Test
    void fa2ScratchIsPlannedForTheSixteenBitCopies() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 4, 33, 128), k = g.input("k", 2, 4, 50, 128);
        Node o = g.attention(q, k, k, Float.NaN, MaskSpec.NONE, null, null);
        Node att = g.build(o).nodes().getLast();
        long want = 2L * 4 * 128 * (33 + 2 * 50) / 2;
        assertEquals(want, Attention.sixteenBitScratch(2, 4, 33, 50, 128));
        assertEquals(want, Attention.scratch(Attention.Path.FLASH, Precision.FP16, 80, null, att));
        assertEquals(0, Attention.scratch(Attention.Path.FLASH, Precision.FP16, 80, Kernel.FLASH_F16_D128, att));
        assertEquals(0, Attention.scratch(Attention.Path.FLASH, Precision.FP16, 75, null, att));
        assertEquals(0, Attention.scratch(Attention.Path.FLASH, Precision.FP32, 90, null, att));
        // the program's step carries it, and the launches use that buffer (no pool allocation)
        run(g, o, "flash", Precision.FP16, 80);
        assertEquals(Kernel.FA2_F16_D128_BR128_W8, rec.launches.getLast().entry());
        long first = rec.launches.getFirst().values().get(1).longValue();
        assertTrue(first < 0x900000, "the converters write into the planned scratch, not a pool buffer");
    }

    @Test
    void tf32x3FlashPassesTheSameArgumentsWithItsOwnTileGrid() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 2, 3, 70, 64), k = g.input("k", 2, 3, 5, 64), v = g.input("v", 2, 3, 5, 64);
        Node mask = g.input("m", 2, 1, 70, 5), kpm = g.input("p", 2, 5);
        Node o = g.attention(q, k, v, 0.5f, new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE), mask, kpm);
        run(g, o, Map.of("flash.fp32", "tf32x3"), Precision.FP32, 90);
        Launch l = rec.launches.getFirst();
        assertEquals(Kernel.FLASH_TF32X3_D64_BR64_W4_BC64, l.entry());
        assertEquals(2 * 3 * 2, l.gx()); // ceil(70 / 64) query tiles per (b, h)
        assertEquals(128, l.threads());
        assertEquals(
                List.<Number>of(
                        addr(q),
                        addr(k),
                        addr(v),
                        addr(o),
                        2,
                        3,
                        3,
                        70,
                        5,
                        0.5f,
                        1,
                        addr(mask),
                        1,
                        350,
                        0,
                        addr(kpm),
                        2,
                        OPEN,
                        0),
                l.values());
        // a named entry: its rows and warps
        rec.launches.clear();
        run(g, o, Map.of("flash.fp32.variant", "tf32x3_d64_br128_w8_bc64"), Precision.FP32, 90);
        l = rec.launches.getFirst();
        assertEquals(Kernel.FLASH_TF32X3_D64_BR128_W8_BC64, l.entry());
        assertEquals(2 * 3, l.gx()); // ceil(70 / 128)
        assertEquals(256, l.threads());
        // a named entry of another head dim: the default entry of this one
        rec.launches.clear();
        run(g, o, Map.of("flash.fp32.variant", "tf32x3_d128_br128_w8_bc32"), Precision.FP32, 90);
        assertEquals(
                Kernel.FLASH_TF32X3_D64_BR64_W4_BC64, rec.launches.getFirst().entry());
        // by default on sm_80+: tf32x3 (the measured default entry), at precision TF32 too
        rec.launches.clear();
        run(g, o, Map.of(), Precision.FP32, 90);
        assertEquals(
                Kernel.FLASH_TF32X3_D64_BR64_W4_BC64, rec.launches.getFirst().entry());
        rec.launches.clear();
        run(g, o, Map.of(), Precision.TF32, 80);
        assertEquals(
                Kernel.FLASH_TF32X3_D64_BR64_W4_BC64, rec.launches.getFirst().entry());
        // before sm_80, or asked for: the SIMT kernel
        rec.launches.clear();
        run(g, o, Map.of("flash.fp32", "tf32x3"), Precision.FP32, 75);
        assertEquals(Kernel.FLASH_F32_D64, rec.launches.getFirst().entry());
        rec.launches.clear();
        run(g, o, Map.of(), Precision.FP32, 75);
        assertEquals(Kernel.FLASH_F32_D64, rec.launches.getFirst().entry());
        rec.launches.clear();
        run(g, o, Map.of("flash.fp32", "simt"), Precision.FP32, 90);
        assertEquals(Kernel.FLASH_F32_D64, rec.launches.getFirst().entry());
    }

    @Test
    void tf32x3DispatchAndOptions() {
        var tf32 = Attention.Fp32Choice.parse(Map.of("flash.fp32", "tf32x3"));
        assertEquals(Kernel.FLASH_TF32X3_D32_BR64_W4_BC64, Attention.tf32Kernel(tf32, 80, 32, 32, true));
        assertEquals(Kernel.FLASH_TF32X3_D64_BR64_W4_BC64, Attention.tf32Kernel(tf32, 90, 64, 64, true));
        assertEquals(Kernel.FLASH_TF32X3_D128_BR128_W8_BC32, Attention.tf32Kernel(tf32, 90, 128, 128, true));
        assertEquals(tf32, Attention.Fp32Choice.DEFAULT); // tf32x3 is the default
        assertEquals(Attention.Fp32Choice.DEFAULT, Attention.Fp32Choice.parse(Map.of()));
        assertEquals(null, Attention.tf32Kernel(tf32, 90, 64, 64, false)); // cp.async needs 16-byte alignment
        assertEquals(null, Attention.tf32Kernel(tf32, 86, 40, 40, true));
        assertEquals(null, Attention.tf32Kernel(tf32, 90, 64, 32, true));
        assertEquals(null, Attention.tf32Kernel(tf32, 75, 64, 64, true));
        assertEquals(null, Attention.tf32Kernel(Attention.Fp32Choice.SIMT, 90, 64, 64, true));
        assertEquals(Attention.Fp32Choice.SIMT, Attention.Fp32Choice.parse(Map.of("flash.fp32", " SIMT ")));
        var v = Attention.Fp32Choice.parse(Map.of("flash.fp32.variant", "tf32x1_d128_br64_w4_bc32"));
        assertEquals(Kernel.FLASH_TF32X1_D128_BR64_W4_BC32, Attention.tf32Kernel(v, 90, 128, 128, true));
        var bad = assertThrows(
                io.attn.AttnException.class, () -> Attention.Fp32Choice.parse(Map.of("flash.fp32", "tf32")));
        assertEquals("option flash.fp32=tf32: expected simt or tf32x3", bad.getMessage());
        bad = assertThrows(
                io.attn.AttnException.class,
                () -> new CudaBackend(rec, rec, Map.of("flash.fp32.variant", "x"), Precision.FP32, 90));
        assertTrue(
                bad.getMessage().startsWith("option flash.fp32.variant=x: expected one of [tf32x3_d32_br64_w4_bc64, "),
                bad.getMessage());
    }

    @Test
    void flashDispatchByHeadDimPrecisionCapabilityAndAlignment() {
        for (int d : new int[] {32, 64, 128})
            assertEquals(
                    "flash_f32_d" + d,
                    Attention.flashKernel(Precision.FP32, 90, d, d, true).entry());
        assertEquals(Kernel.FLASH_F32_D64, Attention.flashKernel(Precision.TF32, 90, 64, 64, true));
        assertEquals(Kernel.FLASH_BF16_D128, Attention.flashKernel(Precision.BF16, 80, 128, 128, true));
        assertEquals(Kernel.FLASH_F16_D64, Attention.flashKernel(Precision.FP16, 90, 64, 64, true));
        // no 16-bit kernel for D = 32, before sm_80, or for misaligned pointers: the fp32 kernel
        assertEquals(Kernel.FLASH_F32_D32, Attention.flashKernel(Precision.BF16, 90, 32, 32, true));
        assertEquals(Kernel.FLASH_F32_D64, Attention.flashKernel(Precision.BF16, 75, 64, 64, true));
        assertEquals(Kernel.FLASH_F32_D64, Attention.flashKernel(Precision.BF16, 90, 64, 64, false));
        // other head dims or Dv != D: no flash kernel (the unfused path)
        assertEquals(null, Attention.flashKernel(Precision.FP32, 90, 40, 40, true));
        assertEquals(null, Attention.flashKernel(Precision.FP32, 90, 64, 32, true));
        assertEquals(null, Attention.flashKernel(Precision.BF16, 90, 256, 256, true));
        assertEquals(null, CudaBackend.precisionUnsupported(Precision.BF16, 80));
        assertEquals(null, CudaBackend.precisionUnsupported(Precision.FP32, 75));
        assertEquals(
                "cuda: precision fp16 needs compute capability 8.0 or newer (this device has 7.5); use fp32 or tf32",
                CudaBackend.precisionUnsupported(Precision.FP16, 75));
    }

    @Test
    void flashIsTheDefaultAndFallsBackToUnfusedForOtherHeadDims() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 2, 4, 40), v = g.input("v", 1, 2, 4, 40);
        run(g, g.attention(q, q, v, Float.NaN, MaskSpec.NONE, null, null), (String) null, Precision.FP32, 90);
        assertEquals(2, rec.gemms.size()); // D = 40: GEMM -> softmax -> GEMM
        assertEquals(Kernel.SOFTMAX_F32, rec.launches.getFirst().entry());
        assertThrows(
                io.attn.AttnException.class,
                () -> new CudaBackend(rec, rec, "fast", Precision.FP32, 90),
                "an unknown attention option is refused");
    }

    @Test
    void matmulWithSharedWeightFoldsTheBatchIntoRows() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 3, 8);
        Node w = g.input("w", 5, 8); // Linear weight (out, in): x . W^T
        Node y = g.matmul(x, w, false, true, 2f);
        run(g, y, false);
        assertEquals(
                new Gemm(false, true, 6, 5, 8, 2f, addr(x), 8, 24, addr(w), 8, 0, addr(y), 5, 30, 1),
                rec.gemms.getFirst());
    }
}
