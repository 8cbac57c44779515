package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** SPLIT_HEADS, MERGE_HEADS ({@code heads.cu}) and CONCAT ({@code concat.cu}, one launch per part): data movement. */
public final class Layout {
    private Layout() {}

    /** {@code (B, L, H*D) -> (B, H, L, D)}. */
    public static void splitHeads(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        Shape s = node.shape(); // out (B, H, L, D)
        st.elementwise(
                Kernel.SPLIT_HEADS_F32,
                s.size(),
                args(x, y).i32(s.dim(0)).i32(s.dim(2)).i32(s.dim(1)).i32(s.dim(3)));
    }

    /** {@code (B, H, L, D) -> (B, L, H*D)}. */
    public static void mergeHeads(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        Shape in = node.input(0).shape(); // (B, H, L, D)
        st.elementwise(
                Kernel.MERGE_HEADS_F32,
                node.shape().size(),
                args(x, y).i32(in.dim(0)).i32(in.dim(1)).i32(in.dim(2)).i32(in.dim(3)));
    }

    /** CONCAT along the node's axis: each part copied into its slot of the output. */
    public static void concat(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
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
