package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * CACHE_WRITE ({@code cache_write.cu}): rows pos .. pos+L-1 of every (b, h) of the cache take x's rows. When the output is
 * the cache itself (the executor's in-place case) only those rows are written; otherwise every element of the output.
 */
public final class CacheWrite {
    private CacheWrite() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        Shape c = node.input(0).shape();
        int l = node.input(1).shape().dim(2);
        boolean inPlace = y.address() == x[0].address();
        long total = (long) c.dim(0) * c.dim(1) * (inPlace ? l : c.dim(2)) * c.dim(3);
        st.elementwise(
                Kernel.CACHE_WRITE_F32,
                total,
                args(x[0], x[1], x[2], y)
                        .i32(c.dim(0) * c.dim(1))
                        .i32(c.dim(2))
                        .i32(l)
                        .i32(c.dim(3))
                        .i32(inPlace ? 0 : 1));
    }
}
