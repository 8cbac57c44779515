package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;

/**
 * ADD, SCALE, ADD_BIAS, RELU, GELU and SILU: one grid-stride launch each of {@code elementwise.cu} ({@code add_f32},
 * {@code scale_f32}, or {@code bias_act_f32} with act 0 none, 1 ReLU, 2 GELU exact, 3 GELU tanh, 4 SiLU). In place is
 * allowed (each element is read, then written, by one thread): {@link MatMul}'s epilogue uses that.
 */
public final class Elementwise {
    private Elementwise() {}

    /** Activation codes of bias_act_f32. */
    static final int NONE = 0, RELU = 1, GELU = 2, GELU_TANH = 3, SILU = 4;

    /** y = a + b over {@code n} elements. */
    public static void add(CudaStream st, CudaBuffer a, CudaBuffer b, CudaBuffer y, int n) {
        st.elementwise(Kernel.ADD_F32, n, args(a, b, y).i32(n));
    }

    /** SCALE: y = factor * x. */
    public static void scale(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        int n = node.shape().size();
        st.elementwise(
                Kernel.SCALE_F32,
                n,
                args(x, y).i32(n).f32(node.params(OpParams.Scale.class).factor()));
    }

    /** ADD_BIAS: y = x + bias over rows of the last dim. */
    public static void addBias(CudaStream st, Node node, CudaBuffer y, CudaBuffer x, CudaBuffer bias) {
        int n = node.shape().size();
        biasAct(st, x, bias, y, n, node.shape().dim(-1), NONE);
    }

    /** RELU. */
    public static void relu(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        biasAct(st, x, null, y, node.shape().size(), 1, RELU);
    }

    /** SILU. */
    public static void silu(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        biasAct(st, x, null, y, node.shape().size(), 1, SILU);
    }

    /** GELU, exact or tanh. */
    public static void gelu(CudaStream st, Node node, CudaBuffer y, CudaBuffer x) {
        int act = node.params(OpParams.Gelu.class).tanh() ? GELU_TANH : GELU;
        biasAct(st, x, null, y, node.shape().size(), 1, act);
    }

    /** y = act(x + bias[j % cols]) over {@code n} elements; bias null for none. */
    static void biasAct(CudaStream st, CudaBuffer x, CudaBuffer bias, CudaBuffer y, int n, int cols, int act) {
        biasAct(st, x, bias, null, y, n, cols, act);
    }

    /** y = act(x + bias[j % cols] + pre[j]) over {@code n} elements; bias, pre null for none. */
    static void biasAct(
            CudaStream st, CudaBuffer x, CudaBuffer bias, CudaBuffer pre, CudaBuffer y, int n, int cols, int act) {
        st.elementwise(
                Kernel.BIAS_ACT_F32, n, args(x, bias, pre, y).i32(n).i32(cols).i32(act));
    }
}
