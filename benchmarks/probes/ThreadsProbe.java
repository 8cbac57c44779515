import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CyclicBarrier;
import jdk.incubator.vector.*;

/**
 * What a second thread can add on this machine, without attn (issue 39, docs/performance.md "Threads on a 2-core VM"):
 * the same work on 1 thread and on T threads at once (started together at a barrier), each thread's rate by its own
 * CPU time and the total by wall time.
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/ThreadsProbe.java fma 2       # FMAs in registers
 *   java --add-modules jdk.incubator.vector benchmarks/probes/ThreadsProbe.java l2 2        # a 256 KB triad (L2)
 *   java --add-modules jdk.incubator.vector benchmarks/probes/ThreadsProbe.java mem 2       # a 96 MB triad (DRAM)
 * </pre>
 *
 * {@code fma}: 10 independent FMA chains, vector-wide (GFLOP/s): whether two threads have two cores' FMA units (two
 * vCPUs on one physical core's SMT siblings would share them). {@code l2}/{@code mem}: {@code a = b + s * c} (GB/s
 * moved, 12 bytes per element): what the second thread adds where a product streams from the caches or memory. Each
 * figure is the best of 7 repetitions, 1 thread then T threads, alternated 3 times.
 */
public class ThreadsProbe {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    static volatile float sink;

    /** 10 chains of {@code iters} FMAs; flops done. */
    static double fma(long iters) {
        FloatVector a = FloatVector.broadcast(SP, 1.0001f), b = FloatVector.broadcast(SP, 0.9999f);
        FloatVector c0 = FloatVector.zero(SP), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0, c8 = c0,
                c9 = c0;
        for (long i = 0; i < iters; i++) {
            c0 = a.fma(b, c0);
            c1 = a.fma(b, c1);
            c2 = a.fma(b, c2);
            c3 = a.fma(b, c3);
            c4 = a.fma(b, c4);
            c5 = a.fma(b, c5);
            c6 = a.fma(b, c6);
            c7 = a.fma(b, c7);
            c8 = a.fma(b, c8);
            c9 = a.fma(b, c9);
        }
        sink = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(c8).add(c9).reduceLanes(VectorOperators.ADD);
        return 2.0 * 10 * SP.length() * iters;
    }

    /** {@code passes} triads over arrays of {@code n}; bytes moved. */
    static double triad(float[] a, float[] b, float[] c, int passes) {
        int n = a.length, ub = SP.loopBound(n);
        for (int p = 0; p < passes; p++)
            for (int i = 0; i < ub; i += SP.length())
                FloatVector.fromArray(SP, b, i).add(FloatVector.fromArray(SP, c, i).mul(1.5f)).intoArray(a, i);
        return 12.0 * n * passes;
    }

    interface Work {
        double run();
    }

    /** {wall rate in total, mean per-thread rate by CPU time} for {@code threads} threads doing {@code work} at once. */
    static double[] once(int threads, java.util.function.IntFunction<Work> work) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads + 1), end = new CyclicBarrier(threads + 1);
        double[] amount = new double[threads], cpu = new double[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            Work w = work.apply(t);
            ts[t] = new Thread(() -> {
                try {
                    start.await();
                    long c0 = MX.getCurrentThreadCpuTime();
                    amount[id] = w.run();
                    cpu[id] = (MX.getCurrentThreadCpuTime() - c0) * 1e-9;
                    end.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ts[t].start();
        }
        start.await();
        long w0 = System.nanoTime();
        end.await();
        double wall = (System.nanoTime() - w0) * 1e-9, total = 0, perThread = 0;
        for (int t = 0; t < threads; t++) {
            total += amount[t];
            perThread += amount[t] / cpu[t] / threads;
        }
        for (Thread t : ts) t.join();
        return new double[] {total / wall, perThread};
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "fma";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        java.util.function.IntFunction<Work> work;
        String unit;
        switch (mode) {
            case "fma" -> {
                work = t -> () -> fma(20_000_000);
                unit = "GFLOP/s";
            }
            case "l2", "mem" -> {
                int n = mode.equals("l2") ? 256 * 1024 / 12 : 8 << 20; // floats per array: 256 KB or 96 MB in all
                int passes = mode.equals("l2") ? 4000 : 10;
                float[][][] arrays = new float[threads][3][n];
                work = t -> () -> triad(arrays[t][0], arrays[t][1], arrays[t][2], passes);
                unit = "GB/s";
            }
            default -> throw new IllegalArgumentException("mode: fma, l2 or mem");
        }
        for (int w = 0; w < 3; w++) once(1, work); // compile
        System.out.printf("%s, %d-bit vectors, %d processors%n", mode, SP.vectorBitSize(),
                Runtime.getRuntime().availableProcessors());
        for (int round = 1; round <= 3; round++) {
            for (int t : new int[] {1, threads}) {
                double bestTotal = 0, bestPer = 0;
                for (int r = 0; r < 7; r++) {
                    double[] x = once(t, work);
                    bestTotal = Math.max(bestTotal, x[0]);
                    bestPer = Math.max(bestPer, x[1]);
                }
                System.out.printf("round %d, %d thread%s: %.1f %s in all (wall), %.1f per thread (its CPU time)%n",
                        round, t, t == 1 ? "" : "s", bestTotal / 1e9, unit, bestPer / 1e9);
            }
        }
    }
}
