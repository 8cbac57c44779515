package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * MATMUL: one strided batched GEMM ({@link CudaStream#gemm}, i.e. cuBLAS or {@code gemm.cu}), then the fused epilogue
 * in place on the product: bias and ReLU ({@code bias_act_f32}), the residual ({@code add_f32}), and with a heads
 * layout the split into heads ({@code split_heads_f32}) from a scratch product into the output.
 */
public final class MatMul {
    private MatMul() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.MatMul.class);
        CudaBuffer a = x[0], b = x[1];
        Shape sa = node.input(0).shape(), sb = node.input(1).shape();
        int m = p.transA() ? sa.dim(-1) : sa.dim(-2);
        int k = p.transA() ? sa.dim(-2) : sa.dim(-1);
        int n = p.transB() ? sb.dim(-2) : sb.dim(-1);
        int batch = sa.leading(2);
        boolean sharedB = sb.rank() == 2;
        long strideA = (long) sa.dim(-2) * sa.dim(-1), strideB = sharedB ? 0 : (long) sb.dim(-2) * sb.dim(-1);
        if (sharedB && !p.transA() && batch > 1) { // (batch, M, K) . (K, N) is one (batch*M, K) . (K, N)
            m *= batch;
            batch = 1;
        }
        int size = node.shape().size();
        // with a heads layout the product goes to a scratch buffer first, then split into heads into y
        CudaBuffer c = p.heads() > 0 ? st.scratch(size) : y;
        try {
            st.gemm(
                    p.transA(),
                    p.transB(),
                    m,
                    n,
                    k,
                    p.alpha(),
                    a,
                    sa.dim(-1),
                    strideA,
                    b,
                    sb.dim(-1),
                    strideB,
                    c,
                    batch);
            // the epilogue, in place on the product (each element is read, then written, by one thread)
            if (p.bias() || p.relu())
                Elementwise.biasAct(
                        st, c, p.bias() ? x[2] : null, c, size, n, p.relu() ? Elementwise.RELU : Elementwise.NONE);
            if (p.residual()) Elementwise.add(st, c, x[p.bias() ? 3 : 2], c, size);
            if (p.heads() > 0) {
                Shape s = node.shape(); // (B, H, L, D)
                st.elementwise(
                        Kernel.SPLIT_HEADS_F32,
                        size,
                        args(c, y).i32(s.dim(0)).i32(s.dim(2)).i32(s.dim(1)).i32(s.dim(3)));
            }
        } finally {
            if (c != y) c.close(); // back to the pool; later users are queued after these kernels on the same stream
        }
    }
}
