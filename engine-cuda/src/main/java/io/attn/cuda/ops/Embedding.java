package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.AttnException;
import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * EMBEDDING: row lookup ({@code embedding.cu}). A bad id gives a zero row and is recorded in the stream's error word,
 * read back after the launch (a sync per embedding: the error belongs to this request) and reported as bad input.
 */
public final class Embedding {
    private Embedding() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer ids, CudaBuffer table) {
        Shape t = node.input(1).shape();
        int n = node.input(0).shape().size(), v = t.dim(0), e = t.dim(1);
        if ((long) n * e == 0) return;
        st.elementwise(
                Kernel.EMBEDDING_F32,
                n * e,
                args(ids, table, y).i32(n).i32(v).i32(e).ptr(st.errorWord()));
        int err = st.takeError(node + " EMBEDDING");
        if (err != 0)
            throw AttnException.badInput(
                    "embedding id at flat position " + (err - 1) + " is not an integer in [0, " + v + ")");
    }
}
