package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/** RMS_NORM over the last dim, optional weight: {@code rms_norm.cu}, one block per row. */
public final class RmsNorm {
    private RmsNorm() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.RmsNorm.class);
        Shape s = node.shape();
        int e = s.dim(-1), rows = s.leading(1);
        CudaBuffer w = p.hasWeight() ? x[1] : null;
        if (rows > 0 && e > 0)
            st.rows(Kernel.RMS_NORM_F32, rows, e, args(x[0], y, w).i32(e).f32(p.eps()));
    }
}
