package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** LAYER_NORM over the last dim, optional weight and bias: {@code layer_norm.cu}, one block per row. */
public final class LayerNorm {
    private LayerNorm() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.LayerNorm.class);
        Shape s = node.shape();
        int e = s.dim(-1), rows = s.leading(1);
        CudaBuffer w = p.hasWeight() ? x[1] : null;
        CudaBuffer b = p.hasBias() ? x[p.hasWeight() ? 2 : 1] : null;
        if (rows > 0 && e > 0)
            st.rows(Kernel.LAYER_NORM_F32, rows, e, args(x[0], y, w, b).i32(e).f32(p.eps()));
    }
}
