package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * MEAN over one axis ({@code mean.cu}): x viewed as (outer, len, inner); one thread per output, or, over the last axis
 * (inner 1), one warp per output row (coalesced reads).
 */
public final class Mean {
    private Mean() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        Shape in = node.input(0).shape();
        int ax = node.params(OpParams.Mean.class).axis();
        int outer = 1, inner = 1;
        for (int i = 0; i < ax; i++) outer *= in.dim(i);
        for (int i = ax + 1; i < in.rank(); i++) inner *= in.dim(i);
        st.elementwise(
                Kernel.MEAN_F32,
                inner == 1 ? 32L * outer : node.shape().size(), // the kernel's warp per row when inner is 1
                args(x, y).i32(outer).i32(in.dim(ax)).i32(inner));
    }
}
