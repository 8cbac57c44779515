package io.attn.cuda.ops;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;

/**
 * MATMUL: one strided batched GEMM ({@link CudaStream#gemm}, i.e. cuBLAS or {@code gemm.cu}); with {@link
 * Fusions}' epilogue, bias and activation in place on the product ({@code bias_act_f32}). When B is a weight the
 * backend holds in 16 bits (a BF16 / F16 buffer: precision bf16 / fp16, {@code HalfWeights}), A is converted to the
 * same format into scratch ({@code f32_to_bf16 / f32_to_f16}) and the GEMM takes both in 16 bits with fp32
 * accumulation ({@link CudaStream#gemm16}).
 */
public final class MatMul {
    private MatMul() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        run(st, node, y, x[0], x[1], null, null, Elementwise.NONE);
    }

    /**
     * MATMUL node {@code node} into y, then {@code y = act(y + bias + pre)} in place when {@code bias} or {@code pre}
     * (an addend laid out like y) is not null or {@code act} is not {@link Elementwise#NONE} (each element is read, then
     * written, by one thread).
     */
    static void run(
            CudaStream st,
            Node node,
            CudaBuffer y,
            CudaBuffer a,
            CudaBuffer b,
            CudaBuffer bias,
            CudaBuffer pre,
            int act) {
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
        if (b.dtype() == DType.F32)
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
                    y,
                    batch);
        else {
            boolean f16 = b.dtype() == DType.F16;
            long na = sa.size();
            CudaBuffer a16 = st.scratch(b.dtype(), na);
            try {
                st.launch(
                        f16 ? Kernel.F32_TO_F16 : Kernel.F32_TO_BF16,
                        Attention.convertBlocks(na),
                        1,
                        1,
                        Attention.CONVERT_THREADS,
                        CudaStream.args(a, a16).i64(na));
                st.gemm16(
                        f16,
                        p.transA(),
                        p.transB(),
                        m,
                        n,
                        k,
                        p.alpha(),
                        a16,
                        sa.dim(-1),
                        strideA,
                        b,
                        sb.dim(-1),
                        strideB,
                        y,
                        batch);
            } finally {
                a16.close(); // queued work on the stream runs before any later user of the block
            }
        }
        if (bias != null || pre != null || act != Elementwise.NONE)
            Elementwise.biasAct(st, y, bias, pre, y, node.shape().size(), n, act);
    }
}
