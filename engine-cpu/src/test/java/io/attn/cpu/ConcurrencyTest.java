package io.attn.cpu;

import static io.attn.cpu.Support.assertClose;

import io.attn.backend.BackendOptions;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** One backend and one executor used by several request threads at once give every caller its own right answer. */
class ConcurrencyTest {
    @Test
    void concurrentCallsDoNotShareScratch() throws Exception {
        Random r = new Random(5);
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 2, 70, 32);
        Node w = g.constant("w", Support.tensor(r, 96, 32));
        Node qkv = g.linear(x, w, null); // (2, 70, 96)
        Node q = g.splitHeads(g.matmul(x, g.constant("wq", Support.tensor(r, 32, 32)), false, false, 1f), 4);
        Node k = g.splitHeads(g.gelu(g.matmul(x, g.constant("wk", Support.tensor(r, 32, 32))), false), 4);
        Node att = g.attention(q, k, k, Float.NaN, MaskSpec.CAUSAL, null, null);
        Node y = g.layerNorm(g.add(g.mergeHeads(att), x), null, null, 1e-5f);
        Graph graph = g.build(y, g.softmax(qkv));
        List<Tensor> inputs = new ArrayList<>();
        for (int i = 0; i < 6; i++) inputs.add(Support.tensor(r, 2, 70, 32));
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(2));
                Executor ex = new Executor(be, graph)) {
            List<List<Tensor>> alone = new ArrayList<>();
            for (Tensor in : inputs) alone.add(ex.run(Map.of("x", in)));
            ExecutorService callers = Executors.newFixedThreadPool(4);
            try {
                List<Future<List<Tensor>>> fs = new ArrayList<>();
                for (int rep = 0; rep < 5; rep++)
                    for (Tensor in : inputs) fs.add(callers.submit(() -> ex.run(Map.of("x", in))));
                for (int i = 0; i < fs.size(); i++) {
                    List<Tensor> got = fs.get(i).get(), want = alone.get(i % inputs.size());
                    for (int o = 0; o < 2; o++) {
                        float[] wd = want.get(o).data();
                        double[] wantD = new double[wd.length];
                        for (int j = 0; j < wd.length; j++) wantD[j] = wd[j];
                        // same kernels, same data: only reduction order (interpreter vs JIT) may differ
                        assertClose(got.get(o).data(), wantD, "concurrent call " + i + " output " + o);
                    }
                }
            } finally {
                callers.shutdown();
            }
        }
    }
}
