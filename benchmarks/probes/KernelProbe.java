import java.lang.foreign.*;
import java.nio.ByteOrder;
import jdk.incubator.vector.*;

/**
 * The GEMM micro-kernel alone, on one packed B panel kept in cache (issue 19, docs/performance.md "Per-CPU GEMM
 * blocking"): attn's 6 x 2-vector tile reading A's rows in place, the same on A interleaved, the 4 x 2 interleaved tile
 * of the 16-register set; and whether the panel's alignment matters (a heap array at float offsets 0..15, against a
 * 64-byte-aligned native segment). No dependency on attn; run it with a JDK 25 (or the bundle's runtime after javac):
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/KernelProbe.java 0.15      # alignment, by offset
 *   java --add-modules jdk.incubator.vector benchmarks/probes/KernelProbe.java 0.2 k     # the three kernels
 *   (add -XX:MaxVectorSize=32 for 256-bit vectors on an AVX-512 machine)
 * </pre>
 *
 * Prints GFLOP/s, the best of repeated 200-call timings, for a K step of 256 (the B panel in L1) and 2048 (in L2).
 */
public class KernelProbe {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final int VL = SP.length(), NR = 2 * VL;
    static final ByteOrder LE = ByteOrder.nativeOrder();

    static float heap(int kc, float[] a, float[] pb, int pbi, float[] c) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        int a0 = 0, a1 = kc, a2 = 2 * kc, a3 = 3 * kc, a4 = 4 * kc, a5 = 5 * kc;
        for (int kk = 0; kk < kc; kk++) {
            FloatVector b0 = FloatVector.fromArray(SP, pb, pbi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, pbi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[a0 + kk]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[a1 + kk]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[a2 + kk]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[a3 + kk]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[a4 + kk]); c40 = x.fma(b0, c40); c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[a5 + kk]); c50 = x.fma(b0, c50); c51 = x.fma(b1, c51);
            pbi += NR;
        }
        return c00.add(c01).add(c10).add(c11).add(c20).add(c21).add(c30).add(c31).add(c40).add(c41).add(c50).add(c51).reduceLanes(VectorOperators.ADD);
    }

    static float seg(int kc, float[] a, MemorySegment pb, long pbi, float[] c) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        int a0 = 0, a1 = kc, a2 = 2 * kc, a3 = 3 * kc, a4 = 4 * kc, a5 = 5 * kc;
        for (int kk = 0; kk < kc; kk++) {
            FloatVector b0 = FloatVector.fromMemorySegment(SP, pb, pbi, LE);
            FloatVector b1 = FloatVector.fromMemorySegment(SP, pb, pbi + 4L * VL, LE);
            FloatVector x = FloatVector.broadcast(SP, a[a0 + kk]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[a1 + kk]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[a2 + kk]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[a3 + kk]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[a4 + kk]); c40 = x.fma(b0, c40); c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[a5 + kk]); c50 = x.fma(b0, c50); c51 = x.fma(b1, c51);
            pbi += 4L * NR;
        }
        return c00.add(c01).add(c10).add(c11).add(c20).add(c21).add(c30).add(c31).add(c40).add(c41).add(c50).add(c51).reduceLanes(VectorOperators.ADD);
    }

    static float k4i(int kc, float[] a, float[] pb, int pbi, float[] c) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00;
        FloatVector c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        for (int kk = 0; kk < kc; kk++) {
            int ai = 4 * kk, bi = pbi + NR * kk;
            FloatVector b0 = FloatVector.fromArray(SP, pb, bi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, bi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[ai]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[ai + 1]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[ai + 2]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[ai + 3]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
        }
        return c00.add(c01).add(c10).add(c11).add(c20).add(c21).add(c30).add(c31).reduceLanes(VectorOperators.ADD);
    }

    static float k6i(int kc, float[] a, float[] pb, int pbi, float[] c) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        for (int kk = 0; kk < kc; kk++) {
            int ai = 6 * kk, bi = pbi + NR * kk;
            FloatVector b0 = FloatVector.fromArray(SP, pb, bi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, bi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[ai]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[ai + 1]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[ai + 2]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[ai + 3]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[ai + 4]); c40 = x.fma(b0, c40); c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[ai + 5]); c50 = x.fma(b0, c50); c51 = x.fma(b1, c51);
        }
        return c00.add(c01).add(c10).add(c11).add(c20).add(c21).add(c30).add(c31).add(c40).add(c41).add(c50).add(c51).reduceLanes(VectorOperators.ADD);
    }

    static volatile float sink;

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 0.25;
        System.out.println("species " + SP + " vl " + VL);

        if (args.length > 1) {
            for (int kc : new int[] {256, 2048}) {
                float[] a = new float[6 * kc]; float[] pb = new float[kc * NR + 64]; float[] c = new float[16];
                for (int i = 0; i < a.length; i++) a[i] = (i % 7) * 0.01f;
                for (int i = 0; i < pb.length; i++) pb[i] = (i % 5) * 0.01f;
                for (int pass = 0; pass < 3; pass++)
                    System.out.printf("kc %d 6x2-rows %.1f 6x2-interleaved %.1f 4x2-interleaved %.1f%n", kc,
                        rate(() -> sink = heap(kc, a, pb, 0, c), 2.0 * 6 * NR * kc, seconds),
                        rate(() -> sink = k6i(kc, a, pb, 0, c), 2.0 * 6 * NR * kc, seconds),
                        rate(() -> sink = k4i(kc, a, pb, 0, c), 2.0 * 4 * NR * kc, seconds));
            }
            return;
        }
        for (int kc : new int[] {256, 2048}) {
            float[] a = new float[6 * kc];
            for (int i = 0; i < a.length; i++) a[i] = (i % 7) * 0.01f;
            float[] pb = new float[kc * NR + 64];
            for (int i = 0; i < pb.length; i++) pb[i] = (i % 5) * 0.01f;
            MemorySegment ms = Arena.global().allocate(4L * pb.length, 64);
            MemorySegment.copy(pb, 0, ms, ValueLayout.JAVA_FLOAT, 0, pb.length);
            float[] c = new float[16];
            double flops = 2.0 * 6 * NR * kc;
            for (int pass = 0; pass < 2; pass++) {
                StringBuilder h = new StringBuilder("kc " + kc + " heap GFLOP/s by float offset:");
                StringBuilder s = new StringBuilder("kc " + kc + " seg64 GFLOP/s by float offset:");
                for (int oo = 0; oo < 16; oo++) { final int o = oo;
                    h.append(String.format(" %d:%.0f", o, rate(() -> sink = heap(kc, a, pb, o, c), flops, seconds)));
                    s.append(String.format(" %d:%.0f", o, rate(() -> sink = seg(kc, a, ms, 4L * o, c), flops, seconds)));
                }
                if (pass == 1) { System.out.println(h); System.out.println(s); }
            }
        }
    }

    static double rate(Runnable r, double flops, double seconds) {
        for (int i = 0; i < 2000; i++) r.run();
        double best = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 200; i++) r.run();
            double g = 200 * flops / (System.nanoTime() - t0);
            best = Math.max(best, g);
        }
        return best;
    }
}
