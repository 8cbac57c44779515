package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** CONCAT ({@code concat.cu}, one launch per part): data movement. */
public final class Concat {
    private Concat() {}

    /** Along the node's axis: each part copied into its slot of the output. */
    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        Shape out = node.shape();
        int ax = node.params(OpParams.Concat.class).axis();
        int outer = 1, inner = 1;
        for (int i = 0; i < ax; i++) outer *= out.dim(i);
        for (int i = ax + 1; i < out.rank(); i++) inner *= out.dim(i);
        int offset = 0;
        for (int p = 0; p < x.length; p++) {
            int part = node.input(p).shape().dim(ax);
            int srcInner = part * inner;
            st.elementwise(
                    Kernel.CONCAT_F32,
                    outer * srcInner,
                    args(x[p], y)
                            .i32(outer)
                            .i32(srcInner)
                            .i32(out.dim(ax) * inner)
                            .i32(offset * inner));
            offset += part;
        }
    }
}
