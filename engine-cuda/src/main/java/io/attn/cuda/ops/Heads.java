package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** SPLIT_HEADS and MERGE_HEADS ({@code heads.cu}): data movement. */
public final class Heads {
    private Heads() {}

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
}
