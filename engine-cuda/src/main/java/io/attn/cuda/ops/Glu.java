package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;

/**
 * GLU ({@code glu.cu}): {@code act(a) * g} over the halves of the last dim; act codes as {@code bias_act_f32}'s (2 GELU,
 * 3 GELU tanh, 4 SiLU). A launch of its own after the product (the fused up+gate GEMM); not fused into it.
 */
public final class Glu {
    private Glu() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        var p = node.params(OpParams.Glu.class);
        int f = node.shape().dim(-1), rows = node.shape().leading(1);
        int act =
                switch (p.act()) {
                    case GELU -> 2;
                    case GELU_TANH -> 3;
                    case SILU -> 4;
                };
        st.elementwise(
                Kernel.GLU_F32,
                (long) rows * f,
                args(x, y).i32(rows).i32(f).i32(act).i32(p.activatedFirst() ? 1 : 0));
    }
}
