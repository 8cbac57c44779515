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
 * SOFTMAX over the last dim of {@code scale * x} plus masks: {@code softmax.cu}, one block per row. The product form
 * (attention weights) first writes Q K^T into the output with a GEMM, then runs the softmax in place on it.
 */
public final class Softmax {
    private Softmax() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.Softmax.class);
        Shape s = node.shape();
        CudaBuffer scores = x[0];
        if (p.product()) { // the weights: q k^T into y, then the softmax in place on it
            Shape sq = node.input(0).shape();
            int l = sq.dim(-2), d = sq.dim(-1), keys = s.dim(-1);
            st.gemm(false, true, l, keys, d, 1f, x[0], d, (long) l * d, x[1], d, (long) keys * d, y, sq.leading(2));
            scores = y;
        }
        if (p.mask().any())
            rows(st, scores, y, s.dim(0), s.dim(1), s.dim(2), s.dim(3), p.scale(), p.mask(), node, x, p.firstMask());
        else rows(st, scores, y, 1, 1, s.leading(1), s.dim(-1), p.scale(), p.mask(), node, x, p.firstMask());
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
