package io.attn.cpu;

import static io.attn.cpu.Support.assertClose;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.attn.backend.BackendOptions;
import io.attn.backend.Program;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * MATMUL on the CPU's packed GEMM where its own blocking turns (row blocks, K steps, column blocks, the unpacked
 * few-row path, tasks per thread count, the fused epilogue), judged by the reference's product ({@link
 * Support#reference}); the shapes every backend must get right are the parity suite's ({@code
 * io.attn.parity.ParityCases}).
 */
class GemmTest {
    /** {@code alpha * op(A) . op(B)} as a one-node graph; B 2-D (shared) or batched like A. */
    private static Graph product(Tensor a, Tensor b, boolean ta, boolean tb, float alpha) {
        GraphBuilder g = new GraphBuilder();
        return g.build(g.matmul(g.input("a", a.shape()), g.input("b", b.shape()), ta, tb, alpha));
    }

    /** The reference's {@code alpha * op(A) . op(B)}. */
    static double[] reference(Tensor a, Tensor b, boolean ta, boolean tb, float alpha) {
        return Support.reference(product(a, b, ta, tb, alpha), Map.of("a", a, "b", b));
    }

    private static float[] matmul(int threads, Tensor a, Tensor b, boolean ta, boolean tb, float alpha) {
        return Support.run(threads, product(a, b, ta, tb, alpha), Map.of("a", a, "b", b))
                .get(0)
                .data();
    }

    private static void check(
            Random r, int batch, int m, int n, int k, boolean ta, boolean tb, float alpha, boolean sharedB) {
        Tensor a = batch == 0
                ? Support.tensor(r, ta ? k : m, ta ? m : k)
                : Support.tensor(r, batch, ta ? k : m, ta ? m : k);
        Tensor b = sharedB || batch == 0
                ? Support.tensor(r, tb ? n : k, tb ? k : n)
                : Support.tensor(r, batch, tb ? n : k, tb ? k : n);
        String what = "matmul batch=" + batch + " m=" + m + " n=" + n + " k=" + k + " ta=" + ta + " tb=" + tb
                + " alpha=" + alpha + " sharedB=" + sharedB;
        assertClose(matmul(2, a, b, ta, tb, alpha), reference(a, b, ta, tb, alpha), what);
    }

    @Test
    void allTransposesAndSizes() {
        Random r = new Random(1);
        int[] sizes = {1, 3, 17, 63, 65, 130};
        for (boolean ta : new boolean[] {false, true})
            for (boolean tb : new boolean[] {false, true})
                for (int i = 0; i < sizes.length; i++) {
                    int m = sizes[i], n = sizes[(i + 2) % sizes.length], k = sizes[(i + 4) % sizes.length];
                    check(r, 0, m, n, k, ta, tb, 1f, true);
                    check(r, 0, k, m, n, ta, tb, -0.37f, true);
                }
    }

    @Test
    void largeAndMultiBlock() {
        Random r = new Random(2);
        // 257 rows cross the 96-row block edge; 4500 = two full K steps of 2048 and a partial one
        check(r, 0, 257, 129, 600, false, false, 1f, true);
        check(r, 0, 57, 129, 4500, false, false, 1f, true);
        check(r, 0, 57, 129, 4500, true, true, 0.5f, true);
        check(r, 0, 100, 600, 70, false, true, 2f, true); // N crosses the 512-column block
        // 2000 rows = 21 row blocks: tasks take runs of two row blocks that share one packed B per K step
        check(r, 0, 2000, 70, 600, false, true, 1f, true);
        check(r, 0, 2000, 70, 600, true, false, 1f, true);
    }

    @Test
    void batchedAndSharedB() {
        Random r = new Random(3);
        for (boolean ta : new boolean[] {false, true})
            for (boolean tb : new boolean[] {false, true}) {
                check(r, 3, 17, 33, 65, ta, tb, 1f, false);
                check(r, 3, 17, 33, 65, ta, tb, 0.25f, true);
            }
        // a short K step (64: each row tile runs across the block's column panels) with edge rows and an edge panel
        // past the 512-column block, per-entry B as attention's scores: the double reference, and the same bits on 1
        // thread (one task per entry) as on 2
        check(r, 3, 100, 530, 64, false, true, 1f, false);
        Tensor qs = Support.tensor(r, 3, 100, 64), ks = Support.tensor(r, 3, 530, 64);
        assertArrayEquals(matmul(1, qs, ks, false, true, 1f), matmul(2, qs, ks, false, true, 1f), "short K");
        // 4-D batch (B, H, L, D) . (B, H, D, S)^T as attention scores would be
        Tensor q = Support.tensor(r, 2, 3, 7, 9), k = Support.tensor(r, 2, 3, 11, 9);
        assertClose(matmul(1, q, k, false, true, 0.3f), reference(q, k, false, true, 0.3f), "4-D batched");
    }

    @Test
    void fusedBiasReluResidualEpilogueIsBitwiseTheSeparateOps() {
        Random r = new Random(5);
        // 150 rows (edge row tiles), 70 columns (two full 32-column panels and an edge), K = 2100 (two K steps); and
        // a 2-row input (the unpacked Gemv path)
        for (int[] dims : new int[][] {{3, 50, 2100}, {2, 2100}}) {
            Tensor x = Support.tensor(r, dims), w = Support.tensor(r, 70, 2100), b = Support.tensor(r, 70);
            for (boolean relu : new boolean[] {false, true}) {
                GraphBuilder g = new GraphBuilder();
                Node xi = g.input("x", x.shape()), wi = g.constant("w", w), bi = g.constant("b", b);
                Node ri = g.input("r", x.shape().with(-1, 70));
                // two graphs: relu(x W^T + b), and r + relu(x W^T + b) (the residual epilogue)
                Graph plain = g.build(g.linear(xi, wi, bi, relu));
                Graph withRes = g.build(g.add(ri, g.linear(xi, wi, bi, relu)));
                Tensor res = Support.tensor(r, x.shape().with(-1, 70).dims());
                Map<String, Tensor> in = Map.of("x", x, "r", res);
                for (Graph graph : new Graph[] {plain, withRes}) {
                    float[] fused2 = Support.run(2, graph, in).get(0).data();
                    float[] fused1 = Support.run(1, graph, in).get(0).data(); // 1 task instead of 4: the same bits
                    assertArrayEquals(fused2, fused1, "1 vs 2 threads");
                    try (CpuBackend be =
                                    new CpuBackend(BackendOptions.defaults().withThreads(2));
                            Executor ex = new Executor(be, Program.unfused(graph, be))) {
                        assertArrayEquals(ex.run(in).get(0).data(), fused2, "fused vs one op at a time, relu=" + relu);
                    }
                }
                var out = Support.run(2, plain, in);
                assertClose(out.get(0).data(), Support.reference(plain, in), "linear relu=" + relu);
            }
        }
    }

    @Test
    void zeroInnerDimensionGivesZeros() {
        Tensor a = Tensor.zeros(4, 0), b = Tensor.zeros(0, 5);
        float[] got = matmul(1, a, b, false, false, 1f);
        assertArrayEquals(new float[20], got);
    }

    @Test
    void threadCountDoesNotChangeBits() {
        Random r = new Random(4);
        Tensor a = Support.tensor(r, 150, 2500), b = Support.tensor(r, 300, 2500); // two K steps
        float[] one = matmul(1, a, b, false, true, 1f);
        float[] two = matmul(2, a, b, false, true, 1f);
        assertArrayEquals(one, two);
        assertClose(two, reference(a, b, false, true, 1f), "150x300x2500");
        // a Linear over (B, L, E): one shared B, run as one tall product (1 task on 1 thread, 4 on 2)
        Tensor x3 = Support.tensor(r, 4, 130, 96), w3 = Support.tensor(r, 80, 96);
        float[] b1 = matmul(1, x3, w3, false, true, 1f);
        assertArrayEquals(b1, matmul(2, x3, w3, false, true, 1f));
        assertClose(b1, reference(x3, w3, false, true, 1f), "4x130x80x96 shared B");
        // few-row products take the unpacked path (Gemv), split over column chunks
        for (boolean tb : new boolean[] {false, true}) {
            Tensor x = Support.tensor(r, 3, 301), w = tb ? Support.tensor(r, 2500, 301) : Support.tensor(r, 301, 2500);
            float[] g1 = matmul(1, x, w, false, tb, 0.7f);
            assertArrayEquals(g1, matmul(2, x, w, false, tb, 0.7f));
            assertClose(g1, reference(x, w, false, tb, 0.7f), "3x2500x301 tb=" + tb);
        }
    }

    @Test
    void rowsSplitEvenlyOverTasks() {
        // the tasks' row chunks are equal shares of MR-row tiles, not of MC blocks, so they start inside blocks;
        // rows the MC blocks do not divide (100: one block and a few rows; 517: a short last tile), a transposed A
        // (packed) and a scaled one, on thread counts that give 1, 4, 6 and 16 tasks
        Random r = new Random(9);
        for (int m : new int[] {100, 512, 517}) {
            for (boolean ta : new boolean[] {false, true}) {
                Tensor a = ta ? Support.tensor(r, 300, m) : Support.tensor(r, m, 300), b = Support.tensor(r, 768, 300);
                float alpha = ta ? 0.5f : 1f;
                float[] one = matmul(1, a, b, ta, true, alpha);
                assertClose(one, reference(a, b, ta, true, alpha), "m=" + m + " ta=" + ta);
                for (int threads : new int[] {2, 3, 8})
                    assertArrayEquals(one, matmul(threads, a, b, ta, true, alpha), "m=" + m + " threads=" + threads);
            }
        }
    }
}
