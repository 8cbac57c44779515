package io.attn.reference.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attn.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Hand-worked checks of the embedding lookup and the sinusoidal positional encoding. */
class RefEmbeddingTest {

    @Test
    void embeddingPicksRows() {
        Tensor table = Tensor.of(new float[] {0, 1, 10, 11, 20, 21}, 3, 2);
        DTensor e = RefEmbedding.embedding(table, new int[] {2, 0, 1, 2}, 2, 2);
        assertArrayEquals(new int[] {2, 2, 2}, e.shape());
        assertArrayEquals(new double[] {20, 21, 0, 1, 10, 11, 20, 21}, e.data(), 0);
        assertThrows(IllegalArgumentException.class, () -> RefEmbedding.embedding(table, new int[] {3}));
    }

    @Test
    void positionalEncodingByHand() {
        // E = 4: w_0 = 1, w_1 = 10000^(-2/4) = 0.01
        DTensor pe = RefEmbedding.sinusoidalPositionalEncoding(3, 4, 0);
        assertArrayEquals(new double[] {0, 1, 0, 1}, row(pe, 0), 0);
        assertArrayEquals(new double[] {Math.sin(1), Math.cos(1), Math.sin(0.01), Math.cos(0.01)}, row(pe, 1), 1e-15);
        assertArrayEquals(new double[] {Math.sin(2), Math.cos(2), Math.sin(0.02), Math.cos(0.02)}, row(pe, 2), 1e-15);
        // offset 2 starts at position 2
        DTensor shifted = RefEmbedding.sinusoidalPositionalEncoding(1, 4, 2);
        assertArrayEquals(row(pe, 2), row(shifted, 0), 0);
        // odd E: the last column is a sine, w_2 = 10000^(-4/5)
        DTensor odd = RefEmbedding.sinusoidalPositionalEncoding(2, 5, 0);
        assertArrayEquals(
                new double[] {
                    Math.sin(1),
                    Math.cos(1),
                    Math.sin(Math.pow(10000, -0.4)),
                    Math.cos(Math.pow(10000, -0.4)),
                    Math.sin(Math.pow(10000, -0.8))
                },
                row(odd, 1),
                1e-15);
    }

    private static double[] row(DTensor t, int r) {
        int e = t.dim(1);
        double[] out = new double[e];
        System.arraycopy(t.data(), r * e, out, 0, e);
        return out;
    }
}
