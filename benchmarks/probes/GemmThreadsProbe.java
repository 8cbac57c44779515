import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Random;

/**
 * attn's GEMM on 1 and on T threads, each call timed by wall clock and by the CPU time of every thread of the JVM
 * (issue 39, docs/performance.md "Threads on a 2-core VM"): on a shared machine the wall time of 2 threads says how
 * much of the machine the JVM got, the CPU time what the product cost; CPU time beyond the 1-thread product's is the
 * second thread's overhead (waiting, packing, cache misses). The blocking is the JVM's: set it with -Dattn.cpu.gemm.*.
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' benchmarks/probes/GemmThreadsProbe.java 1024 2 [SPIN_US]
 * </pre>
 */
public class GemmThreadsProbe {
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024, threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int spin = args.length > 2 ? Integer.parseInt(args[2]) : Parallel.DEFAULT_SPIN_US;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        float[] a = new float[n * n], b = new float[n * n], c = new float[n * n];
        Random r = new Random(1);
        for (int i = 0; i < a.length; i++) {
            a[i] = r.nextFloat();
            b[i] = r.nextFloat();
        }
        double flops = 2.0 * n * n * n;
        System.out.println(io.attn.cpu.CpuInfo.kernels());
        for (int round = 1; round <= 3; round++)
            for (int t : new int[] {1, threads})
                try (Parallel par = new Parallel(t, spin)) {
                    double bestWall = Double.MAX_VALUE, bestCpu = Double.MAX_VALUE;
                    for (int i = 0; i < 20; i++) {
                        long c0 = cpu(mx), w0 = System.nanoTime();
                        Gemm.gemm(par, 1, n, n, n, 1f, a, 0, 0, false, b, 0, 0, false, c, 0, 0);
                        long w1 = System.nanoTime(), c1 = cpu(mx);
                        if (i >= 5) {
                            bestWall = Math.min(bestWall, (w1 - w0) * 1e-9);
                            bestCpu = Math.min(bestCpu, (c1 - c0) * 1e-9);
                        }
                    }
                    System.out.printf(
                            "round %d, %d thread%s, spin %d us: %.1f GFLOP/s wall (%.2f ms), CPU time of all threads %.2f ms%n",
                            round, t, t == 1 ? "" : "s", spin, flops / bestWall / 1e9, bestWall * 1e3, bestCpu * 1e3);
                }
    }

    /** CPU time of every live thread of this JVM, ns. */
    static long cpu(ThreadMXBean mx) {
        long s = 0;
        for (long id : mx.getAllThreadIds()) {
            long t = mx.getThreadCpuTime(id);
            if (t > 0) s += t;
        }
        return s;
    }
}
