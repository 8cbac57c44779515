package io.attn.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link GraphBuilder#residual}: when it fuses the residual add into the last MATMUL, and when it must not. */
class GraphBuilderResidualTest {
    @Test
    void fusesIntoTheLinearJustAdded() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 3, 4);
        Node w = g.constant("w", Tensor.zeros(4, 4)), b = g.constant("b", Tensor.zeros(4));
        Node y = g.linear(x, w, b, true);
        int before = g.build(y).nodes().size();
        Node r = g.residual(x, y);
        Graph graph = g.build(r);
        assertEquals(before, graph.nodes().size(), "the MATMUL is replaced, no ADD is added");
        assertEquals(Op.MATMUL, r.op());
        var p = r.params(OpParams.MatMul.class);
        assertTrue(p.bias() && p.relu() && p.residual());
        assertEquals(List.of(x, w, b, x), r.inputs());
        // the replaced node is gone: using it again is an error, not a silent second product
        assertThrows(IllegalArgumentException.class, () -> g.add(y, y));
    }

    @Test
    void addsWhenTheProductIsNotTheLastNodeOrNotAProduct() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 3, 4);
        Node y = g.linear(x, g.constant("w", Tensor.zeros(4, 4)), null);
        Node z = g.relu(x); // y is no longer the last node: something else may use it
        assertEquals(Op.ADD, g.residual(x, y).op());
        assertEquals(Op.ADD, g.residual(x, z).op()); // not a product
        Node y2 = g.linear(x, g.constant("w2", Tensor.zeros(4, 4)), null);
        Node fused = g.residual(x, y2);
        assertEquals(Op.MATMUL, fused.op());
        assertEquals(Op.ADD, g.residual(x, fused).op(), "a product that has its residual already gets an ADD");
        assertFalse(g.build(fused).nodes().contains(y2));
    }

    @Test
    void aForeignOperandLeavesTheBuilderIntact() {
        GraphBuilder g = new GraphBuilder(), other = new GraphBuilder();
        Node x = g.input("x", 3, 4), foreign = other.input("x", 3, 4);
        Node y = g.linear(x, g.constant("w", Tensor.zeros(4, 4)), null);
        assertThrows(IllegalArgumentException.class, () -> g.residual(foreign, y));
        assertTrue(g.build(y).nodes().contains(y), "y is still there");
        assertEquals(Op.MATMUL, g.residual(x, y).op()); // and can still be fused
        assertThrows(IllegalArgumentException.class, () -> new GraphBuilder().residual(x, y)); // an empty builder
    }

    @Test
    void residualOfAnotherShapeIsRefused() {
        GraphBuilder g = new GraphBuilder();
        Node a = g.input("a", 3, 4), r = g.input("r", 3, 5);
        AttnException e = assertThrows(
                AttnException.class,
                () -> g.matmul(a, g.constant("w", Tensor.zeros(4, 4)), false, false, 1f, null, false, r));
        assertTrue(e.getMessage().contains("residual"), e.getMessage());
    }
}
