package io.attn.benchmarks;

import io.attn.backend.BackendOptions;
import io.attn.cpu.CpuBackend;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The int8 GEMM at embedding shapes, without JMH (issue 37): a Linear's product as the engine runs it, through the
 * executor on the CPU backend, fp32 ({@code MATMUL} with the packed float weight) against {@code QMATMUL} (the whole
 * op: the dynamic quantization of x, the exact product on fp32 FMAs in 256-deep chunks, the scale); and, single-threaded
 * on one (M, K, N) block, the inner loops the Vector API offers for an exact integer product: fp32 FMA on widened
 * values (what QMATMUL runs), {@code IntVector} multiply-add on widened int lanes, and {@code ShortVector} multiply-add
 * (16-bit lanes: exact only while two products of 7-bit weights sum, so it widens to int every second step).
 *
 * <p>args: [threads] [reps]; {@code -Dint8.shapes=MxKxN,...} replaces the embedding shapes (e.g. a decoding step's
 * one row). Prints GMAC/s per shape; the CPU and the load average are the caller's to record.
 */
public final class Int8Gemm {
    private static final VectorSpecies<Float> FS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_PREFERRED;

    private Int8Gemm() {}

    public static void main(String[] args) {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        System.out.printf(
                Locale.ROOT,
                "threads %d, %d reps (median of %s), vector %d bits%n",
                threads,
                reps,
                Boolean.getBoolean("int8.cpuTime") ? "the thread's CPU time" : "wall time",
                FS.vectorBitSize());
        int[][] shapes = {
            {128, 384, 384},
            {128, 384, 1536},
            {128, 1536, 384},
            {512, 384, 384},
            {512, 384, 1536},
            {512, 1536, 384},
            {1024, 384, 1536}
        };
        String only = System.getProperty("int8.shapes"); // e.g. 1x512x1536,4x512x512 (M x K x N): these instead
        if (only != null)
            shapes = Arrays.stream(only.split(","))
                    .map(t -> Arrays.stream(t.split("x"))
                            .mapToInt(Integer::parseInt)
                            .toArray())
                    .toArray(int[][]::new);
        CpuBackend cpu = new CpuBackend(BackendOptions.defaults().withThreads(threads));
        for (int[] s : shapes) {
            int m = s[0], k = s[1], n = s[2];
            SplittableRandom r = new SplittableRandom(37);
            float[] x = new float[m * k], w = new float[n * k];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            for (int i = 0; i < w.length; i++) w[i] = (float) r.nextGaussian() * 0.05f;
            byte[] q = new byte[k * n];
            for (int i = 0; i < q.length; i++) q[i] = (byte) (r.nextInt(129) - 64);
            float[] scale = new float[n];
            Arrays.fill(scale, 0.001f);
            GraphBuilder g1 = new GraphBuilder();
            Node x1 = g1.input("x", 1, m, k);
            Executor fp32 = new Executor(cpu, g1.build(g1.linear(x1, g1.constant("w", Tensor.of(w, n, k)), null)));
            GraphBuilder g2 = new GraphBuilder();
            Node x2 = g2.input("x", 1, m, k);
            Executor int8 =
                    new Executor(cpu, g2.build(g2.qmatmul(x2, Tensor.ofInt8(q, k, n), scale, new byte[n], null)));
            Map<String, Tensor> feeds = Map.of("x", Tensor.of(x, 1, m, k));
            double macs = (double) m * k * n;
            double tf = time(() -> fp32.run(feeds), reps), tq = time(() -> int8.run(feeds), reps);
            System.out.printf(
                    Locale.ROOT,
                    "M=%4d K=%4d N=%4d  fp32 MATMUL %6.1f GMAC/s (%.3f ms)  QMATMUL %6.1f GMAC/s (%.3f ms)  ratio %.2f%n",
                    m,
                    k,
                    n,
                    macs / tf / 1e9,
                    tf * 1e3,
                    macs / tq / 1e9,
                    tq * 1e3,
                    tf / tq);
            fp32.close();
            int8.close();
        }
        inner(reps);
        cpu.close();
    }

    /** The inner loops alone, one thread, a 64-row by 64-column block over K = 256 (what one QMATMUL task runs). */
    private static void inner(int reps) {
        int m = 64, n = 64, k = 256;
        SplittableRandom r = new SplittableRandom(1);
        float[] af = new float[m * k], bf = new float[k * n];
        int[] ai = new int[m * k], bi = new int[k * n];
        short[] as = new short[m * k], bs = new short[k * n];
        byte[] b8 = new byte[k * n];
        for (int i = 0; i < af.length; i++) as[i] = (short) (ai[i] = (int) (af[i] = r.nextInt(256) - 128));
        for (int i = 0; i < bf.length; i++) bs[i] = (short) (bi[i] = b8[i] = (byte) (r.nextInt(129) - 64));
        for (int i = 0; i < bf.length; i++) bf[i] = b8[i];
        int[] acc = new int[m * n];
        double macs = (double) m * n * k;
        double tf = time(() -> floatFma(af, bf, acc, m, n, k), reps * 50);
        double ti = time(() -> intMulAdd(ai, bi, acc, m, n, k), reps * 50);
        double ts = time(() -> shortMulAdd(as, bs, acc, m, n, k), reps * 50);
        double tw = time(() -> widenBytes(b8, bf, k, n), reps * 50);
        System.out.printf(
                Locale.ROOT,
                "inner loops, one thread, 64x256x64: fp32 FMA %.1f GMAC/s, IntVector mul+add %.1f, ShortVector"
                        + " mul+add (int every 2nd k) %.1f; widening the int8 block to float %.2f us (%.1f%% of the"
                        + " FMA block)%n",
                macs / tf / 1e9,
                macs / ti / 1e9,
                macs / ts / 1e9,
                tw * 1e6,
                100 * tw / tf);
    }

    private static void floatFma(float[] a, float[] b, int[] acc, int m, int n, int k) {
        int vl = FS.length();
        for (int i = 0; i < m; i += 4)
            for (int j = 0; j < n; j += 2 * vl) {
                FloatVector c00 = FloatVector.zero(FS), c01 = c00, c10 = c00, c11 = c00;
                FloatVector c20 = c00, c21 = c00, c30 = c00, c31 = c00;
                for (int t = 0; t < k; t++) {
                    FloatVector b0 = FloatVector.fromArray(FS, b, t * n + j);
                    FloatVector b1 = FloatVector.fromArray(FS, b, t * n + j + vl);
                    FloatVector x = FloatVector.broadcast(FS, a[i * k + t]);
                    c00 = x.fma(b0, c00);
                    c01 = x.fma(b1, c01);
                    x = FloatVector.broadcast(FS, a[(i + 1) * k + t]);
                    c10 = x.fma(b0, c10);
                    c11 = x.fma(b1, c11);
                    x = FloatVector.broadcast(FS, a[(i + 2) * k + t]);
                    c20 = x.fma(b0, c20);
                    c21 = x.fma(b1, c21);
                    x = FloatVector.broadcast(FS, a[(i + 3) * k + t]);
                    c30 = x.fma(b0, c30);
                    c31 = x.fma(b1, c31);
                }
                // stored in place: vectors in an array, or passed to a helper C2 does not inline, are boxed
                ((IntVector) c00.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, i * n + j);
                ((IntVector) c01.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, i * n + j + vl);
                ((IntVector) c10.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 1) * n + j);
                ((IntVector) c11.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 1) * n + j + vl);
                ((IntVector) c20.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 2) * n + j);
                ((IntVector) c21.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 2) * n + j + vl);
                ((IntVector) c30.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 3) * n + j);
                ((IntVector) c31.convertShape(VectorOperators.F2I, IS, 0)).intoArray(acc, (i + 3) * n + j + vl);
            }
    }

    private static void intMulAdd(int[] a, int[] b, int[] acc, int m, int n, int k) {
        int vl = IS.length();
        for (int i = 0; i < m; i += 4)
            for (int j = 0; j < n; j += 2 * vl) {
                IntVector c00 = IntVector.zero(IS), c01 = c00, c10 = c00, c11 = c00;
                IntVector c20 = c00, c21 = c00, c30 = c00, c31 = c00;
                for (int t = 0; t < k; t++) {
                    IntVector b0 = IntVector.fromArray(IS, b, t * n + j),
                            b1 = IntVector.fromArray(IS, b, t * n + j + vl);
                    IntVector x = IntVector.broadcast(IS, a[i * k + t]);
                    c00 = c00.add(x.mul(b0));
                    c01 = c01.add(x.mul(b1));
                    x = IntVector.broadcast(IS, a[(i + 1) * k + t]);
                    c10 = c10.add(x.mul(b0));
                    c11 = c11.add(x.mul(b1));
                    x = IntVector.broadcast(IS, a[(i + 2) * k + t]);
                    c20 = c20.add(x.mul(b0));
                    c21 = c21.add(x.mul(b1));
                    x = IntVector.broadcast(IS, a[(i + 3) * k + t]);
                    c30 = c30.add(x.mul(b0));
                    c31 = c31.add(x.mul(b1));
                }
                c00.intoArray(acc, i * n + j);
                c01.intoArray(acc, i * n + j + vl);
                c10.intoArray(acc, (i + 1) * n + j);
                c11.intoArray(acc, (i + 1) * n + j + vl);
                c20.intoArray(acc, (i + 2) * n + j);
                c21.intoArray(acc, (i + 2) * n + j + vl);
                c30.intoArray(acc, (i + 3) * n + j);
                c31.intoArray(acc, (i + 3) * n + j + vl);
            }
    }

    /** 16-bit lanes: a (|a| <= 128) times 7-bit b fits 16 bits, and so does the sum of two; widened to int after. */
    private static void shortMulAdd(short[] a, short[] b, int[] acc, int m, int n, int k) {
        VectorSpecies<Short> ss = ShortVector.SPECIES_PREFERRED;
        int vl = ss.length();
        for (int i = 0; i < m; i += 2)
            for (int j = 0; j < n; j += vl) {
                IntVector lo0 = IntVector.zero(IS), hi0 = lo0, lo1 = lo0, hi1 = lo0;
                for (int t = 0; t < k; t += 2) {
                    ShortVector b0 = ShortVector.fromArray(ss, b, t * n + j),
                            b1 = ShortVector.fromArray(ss, b, (t + 1) * n + j);
                    ShortVector p0 = b0.mul(a[i * k + t]).add(b1.mul(a[i * k + t + 1]));
                    ShortVector p1 = b0.mul(a[(i + 1) * k + t]).add(b1.mul(a[(i + 1) * k + t + 1]));
                    lo0 = lo0.add(p0.convertShape(VectorOperators.S2I, IS, 0));
                    hi0 = hi0.add(p0.convertShape(VectorOperators.S2I, IS, 1));
                    lo1 = lo1.add(p1.convertShape(VectorOperators.S2I, IS, 0));
                    hi1 = hi1.add(p1.convertShape(VectorOperators.S2I, IS, 1));
                }
                lo0.intoArray(acc, i * n + j);
                hi0.intoArray(acc, i * n + j + IS.length());
                lo1.intoArray(acc, (i + 1) * n + j);
                hi1.intoArray(acc, (i + 1) * n + j + IS.length());
            }
    }

    private static void widenBytes(byte[] b, float[] out, int k, int n) {
        VectorSpecies<Byte> bs = ByteVector.SPECIES_64;
        int vl = bs.length();
        for (int i = 0; i + vl <= k * n; i += vl)
            ((FloatVector) ByteVector.fromArray(bs, b, i).convertShape(VectorOperators.B2F, FloatVector.SPECIES_256, 0))
                    .intoArray(out, i);
    }

    /**
     * The median of {@code reps} calls: wall time, or with {@code -Dint8.cpuTime=true} (one thread) the calling thread's
     * CPU time, which a loaded machine's other processes disturb less (they still share the caches).
     */
    private static double time(Runnable call, int reps) {
        var mx = java.lang.management.ManagementFactory.getThreadMXBean();
        boolean cpu = Boolean.getBoolean("int8.cpuTime");
        for (int i = 0; i < Math.max(10, reps); i++) call.run(); // C2 compiles the loops first
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = cpu ? mx.getCurrentThreadCpuTime() : System.nanoTime();
            call.run();
            t[i] = ((cpu ? mx.getCurrentThreadCpuTime() : System.nanoTime()) - t0) / 1e9;
        }
        Arrays.sort(t);
        return t[reps / 2];
    }
}
