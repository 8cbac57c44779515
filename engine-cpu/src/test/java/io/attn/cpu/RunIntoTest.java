package io.attn.cpu;

import static io.attn.cpu.Support.assertClose;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.BackendOptions;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link Executor#runInto}: outputs written into the caller's arrays, as {@link Executor#run} would return them. */
class RunIntoTest {
    private final Random r = new Random(11);

    @Test
    void writesEveryOutputIntoTheCallersArraysCallAfterCall() {
        GraphBuilder g = new GraphBuilder();
        Node a = g.input("a", 3, 20, 16), b = g.input("b", 3, 24, 16);
        Node c = g.matmul(a, b, false, true, 1f); // (3, 20, 24)
        // outputs: the product, the product again (its own copy), a softmax of it, and an input (a leaf: copied)
        Graph graph = g.build(c, c, g.softmax(c), a);
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(2));
                Executor ex = new Executor(be, graph)) {
            float[][] into = new float[4][];
            for (int i = 0; i < 4; i++) {
                into[i] = new float[(int) graph.outputs().get(i).shape().size()];
                Arrays.fill(into[i], Float.NaN); // every element must be overwritten
            }
            for (int call = 0; call < 2; call++) { // the same arrays again, with other inputs
                Tensor ta = Support.tensor(r, 3, 20, 16), tb = Support.tensor(r, 3, 24, 16);
                Map<String, Tensor> in = Map.of("a", ta, "b", tb);
                List<Tensor> got = ex.runInto(in, into);
                for (int i = 0; i < 4; i++) assertSame(into[i], got.get(i).data(), "output " + i + " wraps its array");
                // the product against the double reference; the other outputs as run() gives them
                assertClose(into[0], GemmTest.reference(ta, tb, false, true, 1f), "product, call " + call);
                List<Tensor> fresh = ex.run(in);
                for (int i = 0; i < 4; i++) assertArrayEquals(fresh.get(i).data(), into[i], "output " + i);
                assertTrue(into[0] != into[1]);
            }
        }
    }

    @Test
    void badArraysAreRefusedWithAClearMessage() {
        GraphBuilder g = new GraphBuilder();
        Node a = g.input("a", 4, 8), b = g.input("b", 8, 5);
        Graph graph = g.build(g.matmul(a, b, false, false, 1f), g.softmax(a));
        Tensor ta = Support.tensor(r, 4, 8), tb = Support.tensor(r, 8, 5);
        Map<String, Tensor> in = Map.of("a", ta, "b", tb);
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(1));
                Executor ex = new Executor(be, graph)) {
            float[] c = new float[20], s = new float[32];
            assertMessage(() -> ex.runInto(in, c), "1 output arrays for 2 graph outputs");
            assertMessage(() -> ex.runInto(in, new float[19], s), "output 0 needs an array of 20 floats");
            assertMessage(() -> ex.runInto(in, c, null), "output 1 needs an array of 32 floats");
            float[] shared = new float[20];
            GraphBuilder g2 = new GraphBuilder();
            Node p2 = g2.matmul(g2.input("a", 4, 8), g2.input("b", 8, 5), false, false, 1f);
            Graph twice = g2.build(p2, p2);
            try (Executor ex2 = new Executor(be, twice)) {
                assertMessage(() -> ex2.runInto(in, shared, shared), "outputs 0 and 1 share one array");
            }
            assertMessage(() -> ex.runInto(in, c, ta.data()), "output 1 is the array of input 'a'");
            ex.runInto(in, c, s); // and the right arrays work
            assertClose(c, GemmTest.reference(ta, tb, false, false, 1f), "product");
        }
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
        AttnException e = assertThrows(AttnException.class, call);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
