package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import java.util.List;
import java.util.Optional;

/**
 * A Linear layer found in the graph from its named bias: {@code Add(bias, MatMul(x, W))} or {@code Gemm(x, W, bias)},
 * or dynamically quantized as ONNX Runtime's {@code quantize_dynamic} writes it: {@code Add(bias, Mul(Cast(
 * MatMulInteger(xq, Wq, xZero, wZero)), Mul(xScale, wScale)))} with {@code xq, xScale, xZero =
 * DynamicQuantizeLinear(x)}. Immutable.
 *
 * @param weight the constant holding the weight (int8 or uint8 when quantized)
 * @param inOut true if that constant is stored (in, out), the transpose of PyTorch's (out, in)
 * @param input the tensor the layer reads
 * @param output the tensor the layer writes (bias added)
 * @param scale the weight's scale constant when quantized, else null
 * @param zeroPoint the weight's zero point constant when quantized, else null
 */
record Linear(String weight, boolean inOut, String input, String output, String scale, String zeroPoint) {
    Linear(String weight, boolean inOut, String input, String output) {
        this(weight, inOut, input, output, null, null);
    }

    boolean quantized() {
        return scale != null;
    }

    /** The Linear whose bias is the named constant; a one-line failure if the bias is used otherwise. */
    static Linear find(Graph g, String bias) {
        for (NodeProto n : g.consumers(bias)) {
            if (Graph.is(n, "Add") && n.getInputCount() == 2) {
                Optional<NodeProto> matMul = g.producer(Graph.otherInput(n, bias))
                        .filter(m -> Graph.is(m, "MatMul") && m.getInputCount() == 2);
                if (matMul.isEmpty()) {
                    Optional<NodeProto> mul = g.producer(Graph.otherInput(n, bias))
                            .filter(m -> Graph.is(m, "Mul") && m.getInputCount() == 2);
                    if (mul.isPresent()) {
                        Optional<Linear> q = quantized(g, mul.get(), n);
                        if (q.isPresent()) return q.get();
                    }
                    continue;
                }
                Optional<Linear> l = weight(g, Graph.input(matMul.get(), 1), true, Graph.input(matMul.get(), 0), n);
                if (l.isPresent()) return l.get();
            } else if (isPlainGemm(n) && Graph.input(n, 2).equals(bias)) {
                boolean inOut = Graph.intAttribute(n, "transB", 0) == 0;
                Optional<Linear> l = weight(g, Graph.input(n, 1), inOut, Graph.input(n, 0), n);
                if (l.isPresent()) return l.get();
            }
        }
        throw g.bad(bias + " is not added to a MatMul by a constant weight");
    }

    /**
     * The quantized product behind {@code mul} = {@code Mul(Cast(MatMulInteger(..)), Mul(xScale, wScale))}; empty if
     * mul is not a Cast MatMulInteger's; a one-line failure naming the node where the pattern starts but breaks.
     */
    private static Optional<Linear> quantized(Graph g, NodeProto mul, NodeProto add) {
        for (int side = 0; side < 2; side++) {
            Optional<NodeProto> cast = g.producer(Graph.input(mul, side)).filter(c -> Graph.is(c, "Cast"));
            Optional<NodeProto> mmi =
                    cast.flatMap(c -> g.producer(Graph.input(c, 0))).filter(m -> Graph.is(m, "MatMulInteger"));
            if (mmi.isEmpty()) continue;
            NodeProto m = mmi.get();
            String name = "MatMulInteger '" + m.getName() + "'";
            if (Graph.intAttribute(cast.get(), "to", 0) != 1) throw g.bad(name + " is cast to a type other than float");
            if (m.getInputCount() != 4)
                throw g.bad(name + " has " + m.getInputCount() + " inputs; the importer takes both zero points");
            String wq = Graph.input(m, 1), wZero = Graph.input(m, 3);
            if (g.constant(wq).isEmpty()) throw g.bad(name + " multiplies by a computed B, not a constant weight");
            if (g.constant(wZero).isEmpty()) throw g.bad(name + " has a computed weight zero point");
            NodeProto dql = g.producer(Graph.input(m, 0))
                    .filter(d -> Graph.is(d, "DynamicQuantizeLinear") && d.getOutputCount() == 3)
                    .orElseThrow(() -> g.bad(name + " reads an A not quantized by DynamicQuantizeLinear"));
            if (!dql.getOutput(2).equals(Graph.input(m, 2)))
                throw g.bad(name + " takes an A zero point that is not its DynamicQuantizeLinear's");
            NodeProto scales = g.producer(Graph.input(mul, 1 - side))
                    .filter(s -> Graph.is(s, "Mul") && s.getInputCount() == 2)
                    .orElseThrow(() -> g.bad(name + "'s result is not scaled by Mul(A scale, weight scale)"));
            if (!Graph.input(scales, 0).equals(dql.getOutput(1))
                    && !Graph.input(scales, 1).equals(dql.getOutput(1)))
                throw g.bad(name + "'s result is not scaled by its DynamicQuantizeLinear's scale");
            String wScale = Graph.otherInput(scales, dql.getOutput(1));
            if (g.constant(wScale).isEmpty()) throw g.bad(name + "'s weight scale is computed, not a constant");
            return Optional.of(new Linear(wq, true, Graph.input(dql, 0), Graph.output(add), wScale, wZero));
        }
        return Optional.empty();
    }

    /** A Gemm that is y = x W' + b: no transposed x, no scaling. */
    private static boolean isPlainGemm(NodeProto n) {
        return Graph.is(n, "Gemm")
                && n.getInputCount() == 3
                && Graph.intAttribute(n, "transA", 0) == 0
                && Graph.floatAttribute(n, "alpha", 1f) == 1f
                && Graph.floatAttribute(n, "beta", 1f) == 1f;
    }

    /** The weight operand: a constant, or a constant through a 2-D Transpose (which flips its orientation). */
    private static Optional<Linear> weight(Graph g, String operand, boolean inOut, String input, NodeProto last) {
        String output = Graph.output(last);
        if (g.constant(operand).isPresent()) return Optional.of(new Linear(operand, inOut, input, output));
        return g.producer(operand)
                .filter(t -> Graph.is(t, "Transpose") && t.getInputCount() == 1)
                .filter(t -> Graph.attribute(t, "perm")
                        .map(p -> p.getIntsList().equals(List.of(1L, 0L)))
                        .orElse(true))
                .filter(t -> g.constant(Graph.input(t, 0)).isPresent())
                .map(t -> new Linear(Graph.input(t, 0), !inOut, input, output));
    }
}
