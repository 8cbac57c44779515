package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** POSITIONAL_ENCODING: y = x + the sinusoidal encoding of positions offset .. offset+L-1 ({@code positional_encoding.cu}). */
public final class PositionalEncoding {
    private PositionalEncoding() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        Shape s = node.shape();
        st.elementwise(
                Kernel.POSITIONAL_ENCODING_F32,
                s.size(),
                args(x, y)
                        .i32(s.dim(0))
                        .i32(s.dim(1))
                        .i32(s.dim(2))
                        .i32(node.params(OpParams.PositionalEncoding.class).offset()));
    }
}
