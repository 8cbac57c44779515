package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cpu.Parallel;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.reference.Reference;
import io.attn.tensor.Tensor;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Causal attention in every key tile width {@code attn tune} may choose ({@link Attention#keyTiles}: 32 and 64 keys
 * with 256-bit vectors; 64 only with 512-bit ones), judged by engine-reference's double-precision softmax(QK^T
 * scale + causal mask) V: tiles cut across the diagonal (the masked path) at different places, queries longer and
 * shorter than the keys, a sliding window, grouped K/V heads, a ragged batch, head sizes that are and are not whole
 * vectors. Each width must also give bitwise the same on 1 and 2 threads (the query blocks change with the threads,
 * the tiles must not depend on them).
 */
class CausalKeyTileTest {
    /** Relative Frobenius error bound against the double reference (as the other kernel tests: 10x float32's error). */
    private static final double TOL = 1e-5;

    private final Random r = new Random(41);

    private Tensor tensor(int... dims) {
        Tensor t = Tensor.zeros(dims);
        for (int i = 0; i < t.size(); i++) t.data()[i] = (float) r.nextGaussian();
        return t;
    }

    private void check(int b, int h, int hkv, int l, int s, int d, MaskSpec spec) {
        Tensor q = tensor(b, h, l, d), k = tensor(b, hkv, s, d), v = tensor(b, hkv, s, d);
        GraphBuilder g = new GraphBuilder();
        Node o = g.attention(
                g.input("q", q.shape()),
                g.input("k", k.shape()),
                g.input("v", v.shape()),
                (float) (1 / Math.sqrt(d)),
                spec,
                null,
                null);
        Graph graph = g.build(o);
        double[] want = Reference.run(graph, Map.of("q", q, "k", k, "v", v)).get(0);
        float[][] in = {q.data(), k.data(), v.data()};
        String what = "B=" + b + " H=" + h + "/" + hkv + " L=" + l + " S=" + s + " D=" + d + " " + spec;
        for (int tile : Attention.keyTiles()) {
            float[] one = new float[want.length], two = new float[want.length];
            try (Parallel p1 = new Parallel(1);
                    Parallel p2 = new Parallel(2)) {
                Attention.run(p1, o, one, in, tile);
                Attention.run(p2, o, two, in, tile);
            }
            double num = 0, den = 0;
            for (int i = 0; i < want.length; i++) {
                assertTrue(Float.isFinite(one[i]), what + ", tile " + tile + ": non-finite output");
                num += (one[i] - want[i]) * (one[i] - want[i]);
                den += want[i] * want[i];
            }
            double err = Math.sqrt(num / den);
            assertTrue(err <= TOL, what + ", tile " + tile + ": relative error " + err + " > " + TOL);
            assertArrayEquals(one, two, what + ", tile " + tile + ": 1 and 2 threads differ");
        }
    }

    @Test
    void everyWidthAcrossTheDiagonal() {
        for (int d : new int[] {64, 32, 8, 65}) {
            check(1, 2, 2, 130, 130, d, MaskSpec.CAUSAL); // the diagonal cut mid-tile at every width
            check(1, 2, 2, 70, 130, d, MaskSpec.CAUSAL); // L < S
            check(1, 2, 2, 130, 70, d, MaskSpec.CAUSAL); // L > S: late rows see every key
        }
        check(1, 4, 4, 520, 520, 64, MaskSpec.CAUSAL); // query blocks of many tiles
        check(2, 8, 2, 200, 200, 64, MaskSpec.CAUSAL); // grouped K/V heads
    }

    @Test
    void everyWidthWithASlidingWindowAndARaggedBatch() {
        check(1, 2, 2, 300, 300, 64, MaskSpec.CAUSAL.window(47, 0)); // Mistral's window, across tiles
        check(1, 2, 1, 250, 250, 32, MaskSpec.CAUSAL.window(95, 0));
        check(1, 2, 2, 5 + 70 + 129 + 1, 5 + 70 + 129 + 1, 64, MaskSpec.segments(true, 5, 70, 129, 1));
    }

    @Test
    void aWidthTheVectorsDoNotAllowIsRefused() {
        GraphBuilder g = new GraphBuilder();
        Node o = g.attention(
                g.input("q", 1, 1, 8, 8),
                g.input("k", 1, 1, 8, 8),
                g.input("v", 1, 1, 8, 8),
                1f,
                MaskSpec.CAUSAL,
                null,
                null);
        int vl = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.length();
        for (int bad : new int[] {0, 2 * vl, 4 * vl + 8, 2 * Attention.BC}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> Attention.run(new Parallel(1), o, new float[64], new float[3][64], bad));
            assertEquals(
                    "key tile of " + bad + " keys: expected a multiple of " + 4 * vl + " up to " + Attention.BC,
                    e.getMessage());
        }
    }
}
