package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;

/**
 * MATMUL: maps the node's shapes onto one (batched) {@link Gemm} call, with its epilogue if any (bias, an addend, an
 * activation, a residual, the heads layout); a
 * constant B shared by the batch (a Linear's weight) is packed once ({@link Gemm.PackedB}).
 */
public final class MatMul {
    private MatMul() {}

    /** MATMUL alone. */
    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        run(par, node, out, in[0], in[1], null, null, Gemm.Epilogue.Act.NONE, null, 0);
    }

    /**
     * MATMUL node {@code node}, then the epilogue {@link Fusions} matched after it: {@code bias} (null: none) added to
     * every row, {@code pre} (null: none; laid out like the product) added, the activation {@code act}, {@code
     * residual} (null: none) added, and with {@code heads > 0} the result stored as SPLIT_HEADS leaves it, {@code (B,
     * heads, L, N / heads)}.
     */
    public static void run(
            Parallel par,
            Node node,
            float[] out,
            float[] a,
            float[] b,
            float[] bias,
            float[] pre,
            Gemm.Epilogue.Act act,
            float[] residual,
            int heads) {
        OpParams.MatMul p = node.params(OpParams.MatMul.class);
        Shape sa = node.input(0).shape(), sb = node.input(1).shape();
        int m = p.transA() ? sa.dim(-1) : sa.dim(-2);
        int k = p.transA() ? sa.dim(-2) : sa.dim(-1);
        int n = p.transB() ? sb.dim(-2) : sb.dim(-1);
        int batch = sa.leading(2);
        boolean sharedB = sb.rank() == 2;
        var e = new Gemm.Epilogue(bias, pre, act, residual, heads, m);
        // a constant shared B (a layer's weights) is packed once and reused by every call and every graph of the model;
        // also for 1-4 rows (a decoding step), which read it packed rather than in place (Gemv): 1 x 512 x 2048 17
        // GMAC/s against 11-14, 4 rows 57-66 against 14-17 (one thread, Zen 5; docs/performance.md, "Decoding steps")
        Gemm.PackedB packed = sharedB && node.input(1).op() == Op.CONSTANT && (long) batch * m > 0
                ? Gemm.PackedB.of(b, 0, n, k, p.transB())
                : null;
        if (sharedB && !p.transA()) {
            // A's batch entries are consecutive row blocks: one GEMM with batch*M rows
            Gemm.gemm(par, 1, batch * m, n, k, p.alpha(), a, 0, 0, false, b, 0, 0, p.transB(), out, 0, 0, e, packed);
        } else {
            Gemm.gemm(
                    par,
                    batch,
                    m,
                    n,
                    k,
                    p.alpha(),
                    a,
                    0,
                    m * k,
                    p.transA(),
                    b,
                    0,
                    sharedB ? 0 : k * n,
                    p.transB(),
                    out,
                    0,
                    m * n,
                    e);
        }
    }
}
