package io.attn.cuda.ops;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;

/**
 * MATMUL: one strided batched GEMM ({@link CudaStream#gemm}, i.e. cuBLAS or {@code gemm.cu}); with {@link
 * Fusions}' epilogue, bias and activation in place on the product ({@code bias_act_f32}).
 */
public final class MatMul {
    private MatMul() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        run(st, node, y, x[0], x[1], null, Elementwise.NONE);
    }

    /**
     * MATMUL node {@code node} into y, then {@code y = act(y + bias)} in place when {@code bias} is not null or {@code
     * act} is not {@link Elementwise#NONE} (each element is read, then written, by one thread).
     */
    static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer a, CudaBuffer b, CudaBuffer bias, int act) {
        var p = node.params(OpParams.MatMul.class);
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
        st.gemm(p.transA(), p.transB(), m, n, k, p.alpha(), a, sa.dim(-1), strideA, b, sb.dim(-1), strideB, y, batch);
        if (bias != null || act != Elementwise.NONE)
            Elementwise.biasAct(st, y, bias, y, node.shape().size(), n, act);
    }
}
