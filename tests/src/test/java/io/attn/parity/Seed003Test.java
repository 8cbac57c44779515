package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.reference.Reference;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The tutorial's worked example: Q = K = [[1,0],[0,1]], V = [[10,0],[0,10]], d_k = 2. Scores are I/sqrt(2), so each
 * row's weights are softmax([1/sqrt2, 0]) = [0.6698, 0.3302] (and mirrored), and the output is 10 x the weights.
 * Expected values are the hand-worked ones to 4 decimals, hence the 1e-4 absolute tolerance.
 */
class Seed003Test {
    static final double TOL = 1e-4; // hand values are given to 4 decimals
    static final double[] WEIGHTS = {0.6698, 0.3302, 0.3302, 0.6698};
    static final double[] OUTPUT = {6.6976, 3.3024, 3.3024, 6.6976};
    static final Map<String, Tensor> INPUTS = Map.of(
            "q", Tensor.of(new float[] {1, 0, 0, 1}, 1, 1, 2, 2),
            "k", Tensor.of(new float[] {1, 0, 0, 1}, 1, 1, 2, 2),
            "v", Tensor.of(new float[] {10, 0, 0, 10}, 1, 1, 2, 2));

    /** ATTENTION as one op (scale NaN = 1/sqrt(d_k)). */
    static Graph fused() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, 2, 2), k = g.input("k", 1, 1, 2, 2), v = g.input("v", 1, 1, 2, 2);
        return g.build(g.attention(q, k, v, Float.NaN, MaskSpec.NONE, null, null));
    }

    /** MATMUL(q, k^T, 1/sqrt 2) -> SOFTMAX -> MATMUL(., v); outputs the output then the weights. */
    static Graph unfused() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, 2, 2), k = g.input("k", 1, 1, 2, 2), v = g.input("v", 1, 1, 2, 2);
        Node w = g.softmax(g.matmul(q, k, false, true, (float) (1 / Math.sqrt(2))));
        return g.build(g.matmul(w, v), w);
    }

    @Test
    void referenceFused() {
        assertArrayEquals(OUTPUT, Reference.run(fused(), INPUTS).get(0), TOL);
    }

    @Test
    void referenceUnfused() {
        List<double[]> r = Reference.run(unfused(), INPUTS);
        assertArrayEquals(OUTPUT, r.get(0), TOL);
        assertArrayEquals(WEIGHTS, r.get(1), TOL);
    }

    @Test
    void naiveTestBackend() {
        check(new PlantedBugBackend());
    }

    @Test
    void everyAvailableBackend() {
        List<String> ran = new ArrayList<>();
        for (BackendProvider p : Backends.providers()) {
            boolean available;
            try {
                available = p.probe().available();
            } catch (Throwable t) {
                available = false;
            }
            if (!available) continue;
            check(p.create(BackendOptions.defaults()));
            ran.add(p.name());
        }
        Assumptions.assumeFalse(ran.isEmpty(), "no available backend provider on the class path");
    }

    private static void check(Backend b) {
        try (b;
                Executor fused = new Executor(b, fused());
                Executor unfused = new Executor(b, unfused())) {
            assertArrayEquals(OUTPUT, widen(fused.run(INPUTS).get(0)), TOL, b.name() + " fused");
            List<Tensor> r = unfused.run(INPUTS);
            assertArrayEquals(OUTPUT, widen(r.get(0)), TOL, b.name() + " unfused output");
            assertArrayEquals(WEIGHTS, widen(r.get(1)), TOL, b.name() + " unfused weights");
        }
    }

    private static double[] widen(Tensor t) {
        double[] d = new double[t.size()];
        for (int i = 0; i < d.length; i++) d[i] = t.data()[i];
        return d;
    }
}
