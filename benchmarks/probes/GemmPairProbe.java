import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Does attn's GEMM lose anything by splitting one product over 2 threads? (issue 39, docs/performance.md "Threads on a
 * 2-core VM"). In the same JVM and the same rounds, so that the VM's speed drifts touch all three alike: one n^3 product
 * on a 2-thread pool, the same product on 1 thread, and two independent 1-thread products at once on two threads (their
 * wall time halved: the time per product when both cores work without sharing anything). Medians of 10 / 5 / 5 calls
 * per round, wall time.
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' benchmarks/probes/GemmPairProbe.java [n] [rounds]
 * </pre>
 */
public class GemmPairProbe {
    static float[] rnd(int n, Random r) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = r.nextFloat();
        return x;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024, rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        Random r = new Random(1);
        float[] a0 = rnd(n * n, r), b0 = rnd(n * n, r), a1 = rnd(n * n, r), b1 = rnd(n * n, r);
        float[] c0 = new float[n * n], c1 = new float[n * n];
        System.out.println(io.attn.cpu.CpuInfo.host().describe());
        try (Parallel two = new Parallel(2);
                Parallel one = new Parallel(1);
                Parallel other = new Parallel(1)) {
            ExecutorService ex = Executors.newFixedThreadPool(2);
            for (int round = -1; round < rounds; round++) { // round -1: warm-up, not printed
                List<Double> p2 = new ArrayList<>(), p1 = new ArrayList<>(), pair = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    long t0 = System.nanoTime();
                    Gemm.gemm(two, 1, n, n, n, 1f, a0, 0, 0, false, b0, 0, 0, false, c0, 0, 0);
                    p2.add((System.nanoTime() - t0) / 1e6);
                }
                for (int i = 0; i < 5; i++) {
                    long t0 = System.nanoTime();
                    Gemm.gemm(one, 1, n, n, n, 1f, a0, 0, 0, false, b0, 0, 0, false, c0, 0, 0);
                    p1.add((System.nanoTime() - t0) / 1e6);
                }
                for (int i = 0; i < 5; i++) {
                    long t0 = System.nanoTime();
                    Future<?> f0 = ex.submit(() -> Gemm.gemm(one, 1, n, n, n, 1f, a0, 0, 0, false, b0, 0, 0, false, c0, 0, 0));
                    Future<?> f1 =
                            ex.submit(() -> Gemm.gemm(other, 1, n, n, n, 1f, a1, 0, 0, false, b1, 0, 0, false, c1, 0, 0));
                    f0.get();
                    f1.get();
                    pair.add((System.nanoTime() - t0) / 1e6 / 2);
                }
                if (round >= 0)
                    System.out.printf(
                            "round %d: one product on 2 threads %.1f ms | on 1 thread %.1f ms (%.2fx) | two 1-thread products at once, per product %.1f ms%n",
                            round, med(p2), med(p1), med(p1) / med(p2), med(pair));
            }
            ex.shutdown();
        }
    }

    static double med(List<Double> x) {
        List<Double> s = new ArrayList<>(x);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }
}
