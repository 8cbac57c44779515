package io.attn.cuda.ops;

import io.attn.backend.Backend;
import io.attn.backend.Program;
import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.engine.Precision;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import java.util.ArrayList;
import java.util.List;

/**
 * The CUDA backend's fusion rules, with the kernels of this package:
 *
 * <ul>
 *   <li><b>GEMM epilogue</b> ({@link MatMul}): {@code MATMUL -> [ADD_BIAS] -> [ADD] -> [RELU | GELU | SILU]} as the GEMM and
 *       one {@code bias_act_f32} in place on its product (a {@code Linear} and its activation: two launches and no
 *       intermediate buffer instead of three launches and two buffers);
 *   <li><b>int8 epilogue</b> ({@link Quantized}): {@code QMATMUL -> [ADD_BIAS] -> [RELU | GELU | SILU]} the same way;
 *   <li><b>attention weights</b> ({@link Softmax#runProduct}): {@code MATMUL q k^T -> SOFTMAX}, the softmax in place
 *       on the scores the GEMM wrote into the output;
 *   <li><b>ATTENTION</b> alone, with its scratch memory (the scores of the unfused path) planned by the executor.
 * </ul>
 *
 * The residual add and the split into heads stay steps of their own here (each was a separate kernel before too).
 * A node is fused only when its value has one reader and is not a graph output.
 */
public final class Fusions {
    private Fusions() {}

    /** A fused step's body, run under the backend's stream lock. */
    public interface Launch {
        void run(CudaStream st, CudaBuffer y, CudaBuffer[] x, CudaBuffer scratch);
    }

    /** Makes the program's kernel of a step: checks its buffers, takes the stream, runs {@code launch}. */
    public interface Kernels {
        Program.Kernel kernel(Node output, List<Node> inputs, Launch launch);
    }

    public static Program compile(
            Graph graph,
            Backend backend,
            Kernels kernels,
            Attention.Path path,
            Attention.Fp32Choice fp32,
            Precision precision,
            int capability,
            io.attn.kernels.Kernel variant) {
        Program.Builder b = new Program.Builder(graph);
        for (Node n : graph.nodes()) {
            if (n.isLeaf() || b.covered(n)) continue;
            if (n.op() == Op.MATMUL && (attentionWeights(b, n, kernels) || gemmEpilogue(b, n, kernels))) continue;
            if (n.op() == Op.QMATMUL && qmatmulEpilogue(b, n, kernels)) continue;
            if (n.op() == Op.ATTENTION) {
                long scratch = Attention.scratch(path, precision, capability, variant, n);
                b.add(Program.Step.of(
                        n,
                        scratch,
                        kernels.kernel(
                                n,
                                n.inputs(),
                                (st, y, x, sc) ->
                                        Attention.run(st, path, fp32, precision, capability, variant, n, y, x, sc))));
                continue;
            }
            b.single(n, backend);
        }
        return b.build();
    }

    private static boolean gemmEpilogue(Program.Builder b, Node mm, Kernels kernels) {
        List<Node> covers = new ArrayList<>(List.of(mm));
        List<Node> inputs = new ArrayList<>(List.of(mm.input(0), mm.input(1)));
        Node cur = mm, next = b.soleReader(mm);
        int bias = -1, pre = -1;
        int act = Elementwise.NONE;
        if (next != null
                && next.op() == Op.ADD_BIAS
                && next.input(0) == cur
                && next.input(1).id() < mm.id()) {
            bias = inputs.size();
            inputs.add(next.input(1));
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        if (next != null && next.op() == Op.ADD) { // an addend made before the product (a task adapter's low-rank sum)
            Node other = next.input(0) == cur ? next.input(1) : next.input(0);
            if (other != cur && other.id() < mm.id()) {
                pre = inputs.size();
                inputs.add(other);
                covers.add(cur = next);
                next = b.soleReader(cur);
            }
        }
        if (next != null) {
            act = activation(next);
            if (act != Elementwise.NONE) covers.add(cur = next);
        }
        if (covers.size() == 1) return false;
        final int bi = bias, pi = pre, a = act;
        StringBuilder name = new StringBuilder("MATMUL");
        for (Node c : covers.subList(1, covers.size())) name.append('+').append(c.op());
        b.fused(
                name.toString(),
                covers,
                inputs,
                0,
                kernels.kernel(
                        cur,
                        inputs,
                        (st, y, x, sc) ->
                                MatMul.run(st, mm, y, x[0], x[1], bi < 0 ? null : x[bi], pi < 0 ? null : x[pi], a)));
        return true;
    }

    /** {@code QMATMUL -> [ADD_BIAS] -> [RELU | GELU | SILU]}: the int8 product, then one bias_act_f32 in place. */
    private static boolean qmatmulEpilogue(Program.Builder b, Node qm, Kernels kernels) {
        List<Node> covers = new ArrayList<>(List.of(qm));
        List<Node> inputs = new ArrayList<>(qm.inputs()); // x, and a padded batch's key-padding mask
        Node cur = qm, next = b.soleReader(qm);
        int bias = -1;
        if (next != null
                && next.op() == Op.ADD_BIAS
                && next.input(0) == cur
                && next.input(1).id() < qm.id()) {
            bias = inputs.size();
            inputs.add(next.input(1));
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        int act = next == null ? Elementwise.NONE : activation(next);
        if (act != Elementwise.NONE) covers.add(cur = next);
        if (covers.size() == 1) return false;
        final int bi = bias, a = act;
        StringBuilder name = new StringBuilder("QMATMUL");
        for (Node c : covers.subList(1, covers.size())) name.append('+').append(c.op());
        b.fused(
                name.toString(),
                covers,
                inputs,
                0,
                kernels.kernel(
                        cur, inputs, (st, y, x, sc) -> Quantized.matmul(st, qm, y, x, bi < 0 ? null : x[bi], a)));
        return true;
    }

    /** The epilogue's activation code of {@code n}, or NONE when n is not an activation. */
    private static int activation(Node n) {
        return switch (n.op()) {
            case RELU -> Elementwise.RELU;
            case SILU -> Elementwise.SILU;
            case GELU -> n.params(OpParams.Gelu.class).tanh() ? Elementwise.GELU_TANH : Elementwise.GELU;
            default -> Elementwise.NONE;
        };
    }

    private static boolean attentionWeights(Program.Builder b, Node mm, Kernels kernels) {
        Node sm = b.attentionWeights(mm);
        if (sm == null) return false;
        List<Node> inputs = Program.Builder.attentionWeightsInputs(mm, sm);
        b.fused("MATMUL+SOFTMAX", List.of(mm, sm), inputs, 0, kernels.kernel(sm, inputs, (st, y, x, sc) -> {
            CudaBuffer[] softIn = new CudaBuffer[sm.inputs().size()]; // the softmax's inputs at their node positions
            for (int i = 1; i < softIn.length; i++) softIn[i] = x[i + 1];
            Softmax.runProduct(st, mm, sm, y, x[0], x[1], softIn);
        }));
        return true;
    }
}
