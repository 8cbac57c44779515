import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.KernelBench;

/**
 * Sliding-window vs global attention at ModernBERT-base's attention shape (12 heads of 64, one sequence), CPU backend, 2
 * threads: best of N runs and the heap after (docs/performance.md, "ModernBERT at 8192 tokens"). Run from the repository
 * root after a build, e.g. for L = 8192 with a window of 64 keys on either side, 5 runs (-1: no window):
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -Xmx400m \
 *     -cp engine-core/target/classes:engine-cpu/target/classes:$(find ~/.m2 -name gson-2.11.0.jar) \
 *     tools/WindowBench.java 8192 64 5
 * </pre>
 */
public class WindowBench {
    public static void main(String[] a) throws Exception {
        int seq = Integer.parseInt(a[0]), window = Integer.parseInt(a[1]), runs = Integer.parseInt(a[2]);
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(2));
                KernelBench b = KernelBench.attention(e, 1, 12, seq, 0, 64, false, window, false, false, false)) {
            b.run();
            double best = Double.MAX_VALUE;
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                b.run();
                best = Math.min(best, (System.nanoTime() - t0) / 1e6);
            }
            System.gc();
            Runtime rt = Runtime.getRuntime();
            System.out.printf("%s: best of %d %.1f ms, %.1f GFLOP/s; heap used after %.0f MB%n", b.shape(), runs, best,
                    b.flops() / best / 1e6, (rt.totalMemory() - rt.freeMemory()) / 1e6);
        }
    }
}
