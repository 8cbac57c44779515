package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import java.util.List;
import java.util.Optional;

/**
 * A Linear layer found in the graph from its named bias: {@code Add(bias, MatMul(x, W))} or {@code Gemm(x, W, bias)}.
 * Immutable.
 *
 * @param weight the constant holding the weight
 * @param inOut true if that constant is stored (in, out), the transpose of PyTorch's (out, in)
 * @param input the tensor the layer reads
 * @param output the tensor the layer writes (bias added)
 */
record Linear(String weight, boolean inOut, String input, String output) {

    /** The Linear whose bias is the named constant; a one-line failure if the bias is used otherwise. */
    static Linear find(Graph g, String bias) {
        for (NodeProto n : g.consumers(bias)) {
            if (Graph.is(n, "Add") && n.getInputCount() == 2) {
                Optional<NodeProto> matMul = g.producer(Graph.otherInput(n, bias))
                        .filter(m -> Graph.is(m, "MatMul") && m.getInputCount() == 2);
                if (matMul.isEmpty()) continue;
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
