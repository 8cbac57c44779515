package io.attn.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attn.AttnException;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** {@link GraphBuilder#linearHeads}: the shape of a projection split into heads, and what it refuses. */
class LinearHeadsTest {
    @Test
    void shapeIsSplitIntoHeads() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 5, 8);
        Node y = g.linearHeads(x, g.constant("w", Tensor.zeros(12, 8)), g.constant("b", Tensor.zeros(12)), 3);
        assertEquals(Shape.of(2, 3, 5, 4), y.shape());
        assertEquals(3, y.params(OpParams.MatMul.class).heads());
    }

    @Test
    void refusesWhatItCannotSplit() {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 5, 8);
        assertThrows(AttnException.class, () -> g.linearHeads(x, g.constant("w", Tensor.zeros(10, 8)), null, 3));
        assertThrows(
                AttnException.class,
                () -> g.linearHeads(g.input("x2", 5, 8), g.constant("w2", Tensor.zeros(12, 8)), null, 3));
    }
}
