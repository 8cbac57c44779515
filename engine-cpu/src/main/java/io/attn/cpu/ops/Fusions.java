package io.attn.cpu.ops;

import static io.attn.backend.Program.Builder.before;

import io.attn.backend.Backend;
import io.attn.backend.Program;
import io.attn.cpu.CpuBuffer;
import io.attn.cpu.Parallel;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU backend's fusion rules: which runs of graph nodes it computes as one step, with the kernels of this package.
 * Each fused step gives bitwise what its nodes give one by one (the same float operations in the same order), and
 * saves the memory traffic of the values in between:
 *
 * <ul>
 *   <li><b>GEMM epilogue</b> ({@link Gemm.Epilogue}): {@code MATMUL -> [ADD_BIAS] -> [ADD pre] -> [RELU | GELU] ->
 *       [ADD residual | SPLIT_HEADS]} (no SPLIT_HEADS after a GELU), applied to each tile of the product while it is
 *       in L1 (a {@code Linear}, a low-rank adapter's product beside it, its activation, the residual connection
 *       after an attention block's or feed-forward's last projection; a q/k/v projection stored straight in the heads
 *       layout).
 *   <li><b>Attention weights</b> ({@link Softmax#runProduct}): {@code MATMUL q k^T -> SOFTMAX (scale, masks)}, each
 *       block of score rows normalised while it is in cache.
 * </ul>
 *
 * A node is fused into a step only when the step is the only reader of the node before it and that node is not a
 * graph output (its value is never stored), and only when the step's other inputs exist before its first node.
 */
public final class Fusions {
    private Fusions() {}

    /** The program of {@code graph} on the CPU backend {@code backend} (whose kernels use {@code par}). */
    public static Program compile(Graph graph, Backend backend, Parallel par) {
        Program.Builder b = new Program.Builder(graph);
        Map<Node, QMatMul.Share> shares = quantizationShares(graph);
        for (Node n : graph.nodes()) {
            if (n.isLeaf() || b.covered(n)) continue;
            if (n.op() == Op.MATMUL && (attentionWeights(b, n, par) || gemmEpilogue(b, n, par))) continue;
            if (n.op() == Op.QMATMUL) {
                qmatmul(b, n, par, shares.get(n));
                continue;
            }
            b.single(n, backend);
        }
        return b.build();
    }

    /**
     * {@code MATMUL -> [ADD_BIAS] -> [ADD pre] -> [RELU | GELU] -> [ADD residual | SPLIT_HEADS]}: false when nothing
     * follows the product.
     */
    private static boolean gemmEpilogue(Program.Builder b, Node mm, Parallel par) {
        var p = mm.params(OpParams.MatMul.class);
        List<Node> covers = new ArrayList<>(List.of(mm));
        List<Node> inputs = new ArrayList<>(List.of(mm.input(0), mm.input(1)));
        Node cur = mm, next = b.soleReader(mm);
        int bias = -1, pre = -1, residual = -1, heads = 0;
        Gemm.Epilogue.Act act = Gemm.Epilogue.Act.NONE;
        if (next != null && next.op() == Op.ADD_BIAS && next.input(0) == cur && before(next.input(1), mm)) {
            bias = inputs.size();
            inputs.add(next.input(1));
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        // an addend of the product's own shape before the activation (a low-rank adapter's product, nn/Linear): with
        // no activation after it, it is what a residual would be, in the same order
        Node other = addend(next, cur, mm);
        if (other != null) {
            pre = inputs.size();
            inputs.add(other);
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        if (next != null && (next.op() == Op.RELU || next.op() == Op.GELU)) {
            act = next.op() == Op.RELU
                    ? Gemm.Epilogue.Act.RELU
                    : next.params(OpParams.Gelu.class).tanh() ? Gemm.Epilogue.Act.GELU_TANH : Gemm.Epilogue.Act.GELU;
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        if ((other = addend(next, cur, mm)) != null) {
            residual = inputs.size();
            inputs.add(other);
            covers.add(cur = next);
        } else if (next != null
                && next.op() == Op.SPLIT_HEADS
                && (act == Gemm.Epilogue.Act.NONE || act == Gemm.Epilogue.Act.RELU)
                && mm.input(0).shape().rank() == 3
                && mm.input(1).shape().rank() == 2
                && !p.transA()) {
            heads = next.params(OpParams.SplitHeads.class).heads();
            covers.add(cur = next);
        }
        if (covers.size() == 1) return false;
        final int bi = bias, pi = pre, ri = residual, h = heads;
        final Gemm.Epilogue.Act r = act;
        StringBuilder name = new StringBuilder("MATMUL");
        for (Node c : covers.subList(1, covers.size())) name.append('+').append(c.op());
        b.fused(
                name.toString(),
                covers,
                inputs,
                0,
                (out, in, scratch) -> MatMul.run(
                        par,
                        mm,
                        CpuBuffer.of(out),
                        CpuBuffer.of(in[0]),
                        CpuBuffer.of(in[1]),
                        bi < 0 ? null : CpuBuffer.of(in[bi]),
                        pi < 0 ? null : CpuBuffer.of(in[pi]),
                        r,
                        ri < 0 ? null : CpuBuffer.of(in[ri]),
                        h));
        return true;
    }

    /**
     * The other input of {@code next} when it is an ADD of {@code cur} and a value that exists before the step at
     * {@code first} (so that the step can read it); else null.
     */
    private static Node addend(Node next, Node cur, Node first) {
        if (next == null || next.op() != Op.ADD) return null;
        Node other = next.input(0) == cur ? next.input(1) : next.input(0);
        return other != cur && before(other, first) ? other : null;
    }

    /**
     * The int8 products that quantize the same x ({@link QMatMul.Share}): those with the same inputs (x, and a padded
     * batch's mask) and the same row groups, two or more, each mapped to their share (whose first is the first in
     * graph order, the order their steps run in).
     */
    public static Map<Node, QMatMul.Share> quantizationShares(Graph graph) {
        Map<List<Object>, List<Node>> same = new LinkedHashMap<>();
        for (Node n : graph.nodes())
            if (n.op() == Op.QMATMUL) {
                int[] groups = n.params(OpParams.QMatMul.class).groups();
                List<Object> key = new ArrayList<>(n.inputs());
                key.add(
                        groups == null
                                ? List.of()
                                : Arrays.stream(groups).boxed().toList());
                same.computeIfAbsent(key, x -> new ArrayList<>()).add(n);
            }
        Map<Node, QMatMul.Share> shares = new HashMap<>();
        for (List<Node> nodes : same.values()) {
            if (nodes.size() < 2) continue;
            QMatMul.Share share = new QMatMul.Share(nodes.get(0), nodes.get(nodes.size() - 1));
            for (Node n : nodes) shares.put(n, share);
        }
        return shares;
    }

    /**
     * {@code QMATMUL -> [ADD_BIAS] -> [RELU | GELU] -> [ADD residual | SPLIT_HEADS]} (no SPLIT_HEADS after a GELU):
     * the GEMM epilogue's arithmetic on each block of the int8 product once its float result is stored (issue 37), or
     * the product alone; {@code share} (null: none) the products that quantize the same x.
     */
    private static void qmatmul(Program.Builder b, Node qm, Parallel par, QMatMul.Share share) {
        List<Node> covers = new ArrayList<>(List.of(qm));
        List<Node> inputs = new ArrayList<>(qm.inputs()); // x, and a padded batch's key-padding mask
        Node cur = qm, next = b.soleReader(qm);
        int bias = -1, residual = -1, heads = 0;
        Gemm.Epilogue.Act act = Gemm.Epilogue.Act.NONE;
        if (next != null && next.op() == Op.ADD_BIAS && next.input(0) == cur && before(next.input(1), qm)) {
            bias = inputs.size();
            inputs.add(next.input(1));
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        if (next != null && (next.op() == Op.RELU || next.op() == Op.GELU)) {
            act = next.op() == Op.RELU
                    ? Gemm.Epilogue.Act.RELU
                    : next.params(OpParams.Gelu.class).tanh() ? Gemm.Epilogue.Act.GELU_TANH : Gemm.Epilogue.Act.GELU;
            covers.add(cur = next);
            next = b.soleReader(cur);
        }
        Node other = addend(next, cur, qm);
        if (other != null) {
            residual = inputs.size();
            inputs.add(other);
            covers.add(cur = next);
        } else if (next != null
                && next.op() == Op.SPLIT_HEADS
                && (act == Gemm.Epilogue.Act.NONE || act == Gemm.Epilogue.Act.RELU)
                && qm.input(0).shape().rank() == 3) {
            heads = next.params(OpParams.SplitHeads.class).heads();
            covers.add(cur = next);
        }
        final int bi = bias, ri = residual, h = heads, len = qm.shape().dim(-2);
        final Gemm.Epilogue.Act r = act;
        final boolean padded = qm.inputs().size() > 1;
        StringBuilder name = new StringBuilder("QMATMUL");
        for (Node c : covers.subList(1, covers.size())) name.append('+').append(c.op());
        b.fused(
                name.toString(),
                covers,
                inputs,
                0,
                (out, in, scratch) -> QMatMul.run(
                        par,
                        qm,
                        CpuBuffer.of(out),
                        CpuBuffer.of(in[0]),
                        padded ? CpuBuffer.of(in[1]) : null,
                        covers.size() == 1
                                ? null
                                : new Gemm.Epilogue(
                                        bi < 0 ? null : CpuBuffer.of(in[bi]),
                                        r,
                                        ri < 0 ? null : CpuBuffer.of(in[ri]),
                                        h,
                                        h > 0
                                                ? len
                                                : qm.shape().size() / qm.shape().dim(-1)),
                        share));
    }

    /** {@code MATMUL q k^T (alpha 1, batched k) -> SOFTMAX}. */
    private static boolean attentionWeights(Program.Builder b, Node mm, Parallel par) {
        Node sm = b.attentionWeights(mm);
        if (sm == null) return false;
        List<Node> inputs = Program.Builder.attentionWeightsInputs(mm, sm);
        b.fused("MATMUL+SOFTMAX", List.of(mm, sm), inputs, 0, (out, in, scratch) -> {
            float[][] softIn = new float[sm.inputs().size()][]; // the softmax's inputs at their node positions
            for (int i = 1; i < softIn.length; i++) softIn[i] = CpuBuffer.of(in[i + 1]);
            Softmax.runProduct(par, mm, sm, CpuBuffer.of(out), CpuBuffer.of(in[0]), CpuBuffer.of(in[1]), softIn);
        });
        return true;
    }
}
