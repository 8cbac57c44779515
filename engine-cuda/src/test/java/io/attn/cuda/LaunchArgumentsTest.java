package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Buffer;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.Op;
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
    record Launch(String file, String entry, int gx, int gy, int gz, int threads, List<Number> values) {}

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
        public void launch(String file, String entry, int gx, int gy, int gz, int threads, KernelArgs args) {
            assertTrue(Kernels.ENTRIES.get(file).contains(entry), file + "." + entry);
            assertEquals(Kernels.params(file, entry), args.types(), entry + " argument types");
            assertTrue(gx >= 1 && gy >= 1 && gy <= 65535 && gz >= 1 && gz <= 65535, entry + " grid");
            assertTrue(threads >= 32 && threads <= 1024 && threads % 32 == 0, entry + " block " + threads);
            launches.add(new Launch(file, entry, gx, gy, gz, threads, List.copyOf(args.values())));
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

    /** Runs every computed node of the graph on a backend without a device. */
    void run(GraphBuilder g, Node out, boolean fused) {
        try (CudaBackend be = new CudaBackend(rec, rec, fused)) {
            for (Node n : g.build(out).nodes()) {
                bufs.put(
                        n,
                        new CudaBuffer(DevPtr.fake(next), DType.F32, n.shape().size(), null));
                next += 0x10000;
                if (n.isLeaf()) continue;
                assertTrue(be.supports(n));
                Buffer[] in = n.inputs().stream().map(bufs::get).toArray(Buffer[]::new);
                be.execute(n, bufs.get(n), in);
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
        Node h = g.gelu(g.linear(ln, g.constant("W", Tensor.zeros(8, 8)), g.constant("bb", Tensor.zeros(8))), false);
        Node r = g.relu(g.gelu(g.scale(g.add(h, x), 0.5f), true));
        Node q = g.splitHeads(r, 2); // (2, 2, 3, 4)
        Node sc = g.softmax(g.matmul(q, q, false, true, 1f)); // unmasked softmax of scores
        Node att = g.attention(q, q, q, Float.NaN, MaskSpec.CAUSAL, null, null);
        Node m = g.mergeHeads(g.add(att, g.matmul(sc, q)));
        Node c = g.concat(1, m, m); // (2, 6, 8)
        Node out = g.mean(c, 1);
        g.cacheWrite(g.input("cache", 2, 2, 5, 4), q, g.input("pos", 1)); // not read: run() executes every node
        run(g, out, false);
        for (Node n : g.build(out).nodes()) seen.add(n.op());
        assertEquals(EnumSet.allOf(Op.class), seen, "the graph covers every op");
        Set<String> entries = new java.util.TreeSet<>();
        for (Launch l : rec.launches) entries.add(l.entry());
        // every kernel but the fused attention and the GEMM fallback (Blas is recorded separately here)
        Set<String> all = new java.util.TreeSet<>();
        Kernels.ENTRIES.values().forEach(all::addAll);
        all.removeAll(List.of("attention_f32", "gemm_f32"));
        assertEquals(all, entries);
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
        assertEquals("softmax_f32", l.entry());
        assertEquals(2 * 3 * 4, l.gx()); // one block per row
        // x, y, H, L, S, scale, causal, mask, maskKind, strideB, strideH, kpm, kpmKind
        assertEquals(
                List.<Number>of(addr(s), addr(y), 3, 4, 5, 0.25f, 1, addr(mask), 1, 20, 0, addr(kpm), 2), l.values());
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
        assertEquals(List.<Number>of(scratch, scratch, 3, 4, 5, 0.5f, 0, addr(mask), 2, 0, 0, 0L, 0), sm.values());
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
        assertEquals("attention_f32", l.entry());
        assertEquals(6, l.gx()); // 24 rows, 4 per block of 128 threads
        assertEquals(
                List.<Number>of(
                        addr(q), addr(k), addr(v), addr(o), 2, 3, 4, 5, 8, 6, 0.5f, 1, 0L, 0, 0, 0, addr(kpm), 1),
                l.values());
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
