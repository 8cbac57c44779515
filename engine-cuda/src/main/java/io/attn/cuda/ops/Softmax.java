package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * SOFTMAX over the last dim of {@code scale * x} plus masks: {@code softmax.cu}, one block per row. With {@link
 * Fusions}' attention weights, Q K^T is first written into the output with a GEMM and the softmax runs in place on it.
 */
public final class Softmax {
    private Softmax() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.Softmax.class);
        Shape s = node.shape();
        if (p.mask().any())
            rows(st, x[0], y, s.dim(0), s.dim(1), s.dim(2), s.dim(3), p.scale(), p.mask(), node, x, p.firstMask());
        else rows(st, x[0], y, 1, 1, s.leading(1), s.dim(-1), p.scale(), p.mask(), node, x, p.firstMask());
    }

    /**
     * MATMUL {@code product} (q k^T) into y, then SOFTMAX {@code node} in place on it; {@code x} holds the softmax
     * node's inputs (the first, the scores, unused) so that its masks are at their node positions.
     */
    static void runProduct(
            CudaStream st, Node product, Node node, CudaBuffer y, CudaBuffer q, CudaBuffer k, CudaBuffer[] x) {
        Shape sq = product.input(0).shape();
        int l = sq.dim(-2), d = sq.dim(-1), keys = node.shape().dim(-1);
        st.gemm(false, true, l, keys, d, 1f, q, d, (long) l * d, k, d, (long) keys * d, y, sq.leading(2));
        x[0] = y;
        run(st, node, y, x);
    }

    /**
     * softmax_f32 over the b * h * l rows of s scores in {@code x}, into {@code y} (may be x); masks come from the
     * node's inputs starting at {@code firstMask}.
     */
    static void rows(
            CudaStream st,
            CudaBuffer x,
            CudaBuffer y,
            int b,
            int h,
            int l,
            int s,
            float scale,
            MaskSpec spec,
            Node node,
            CudaBuffer[] in,
            int firstMask) {
        long rows = (long) b * h * l;
        if (rows == 0 || s == 0) return;
        Masks mk = Masks.of(spec, node, in, firstMask, l, s);
        st.rows(
                Kernel.SOFTMAX_F32,
                (int) rows,
                s,
                args(x, y)
                        .i32(h)
                        .i32(l)
                        .i32(s)
                        .f32(scale)
                        .i32(spec.causal() ? 1 : 0)
                        .then(mk::appendTo));
    }
}
