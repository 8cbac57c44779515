import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import io.attn.cpu.ops.QMatMul;
import io.attn.graph.OpParams;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Random;

/**
 * QMATMUL at one text's row counts with the weights as a model has them: all-MiniLM-L6-v2's six layers of Linears
 * (384 x 384 four times, 384 x 1536, 1536 x 384: 10.6 MB int8, 42 MB float32), called in model order so that each
 * product finds its weight where the five before it left the caches; against the float32 product on the same shapes
 * with its weights packed once (as MATMUL runs them). us per pass of the 36 products (median of the third round) and
 * GMAC/s. With the engine built ({@code mvn -o install -DskipTests}) and a JDK 25:
 *
 * <pre>
 *   java -XX:+UseParallelGC --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' \
 *       benchmarks/probes/QColdProbe.java [rows,...] [threads,...]
 * </pre>
 *
 * {@code -Dpasses=N} (default 200); {@code -Dalign=true} also prints where each weight's data starts modulo 64 bytes
 * (read through {@code sun.misc.Unsafe}, assuming zero-based compressed references: a diagnostic only). Measured
 * 2026-12-06 on AMD EPYC family 26 model 2 (Zen 5; benchmarks/RESULTS.md, "third session"): with the weights read
 * row-major, 25 rows at one thread ran at 34-41 GMAC/s under the parallel collector against 47-73 under G1 (float32
 * 58-66 under both); packed in 64-column blocks ({@code QMatMul.Packed}), 57-73 under both.
 */
public class QColdProbe {
    public static void main(String[] args) throws Exception {
        int[] rowsList = Arrays.stream((args.length > 0 ? args[0] : "8,18,40").split(",")).mapToInt(Integer::parseInt).toArray();
        int[] threadsList = Arrays.stream((args.length > 1 ? args[1] : "1,2").split(",")).mapToInt(Integer::parseInt).toArray();
        int passes = Integer.getInteger("passes", 200);
        int[][] shapes = {{384, 384}, {384, 384}, {384, 384}, {384, 384}, {384, 1536}, {1536, 384}}; // (K, N)
        int layers = 6, count = layers * shapes.length;
        Random r = new Random(1);
        OpParams.QMatMul[] q = new OpParams.QMatMul[count];
        float[][] f = new float[count][];
        Gemm.PackedB[] pk = new Gemm.PackedB[count];
        long macsPerRow = 0;
        for (int i = 0; i < count; i++) {
            int k = shapes[i % shapes.length][0], n = shapes[i % shapes.length][1];
            macsPerRow += (long) k * n;
            byte[] w = new byte[k * n];
            float[] wf = new float[k * n];
            for (int j = 0; j < w.length; j++) {
                w[j] = (byte) (r.nextInt(255) - 127);
                wf[j] = w[j] * 0.01f;
            }
            q[i] = new OpParams.QMatMul(Tensor.ofInt8(w, k, n), new float[] {0.01f}, new byte[] {0}, null);
            f[i] = wf;
            pk[i] = Gemm.PackedB.of(wf, 0, n, k, false);
        }
        System.out.println(io.attn.cpu.CpuInfo.host().describe());
        if (Boolean.getBoolean("align")) {
            var f0 = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f0.setAccessible(true);
            sun.misc.Unsafe u = (sun.misc.Unsafe) f0.get(null);
            Object[] holder = new Object[1];
            StringBuilder sb = new StringBuilder("weight data address mod 64:");
            for (int i = 0; i < count; i++) {
                holder[0] = q[i].weight().int8();
                long narrow = u.getInt(holder, (long) u.arrayBaseOffset(Object[].class)) & 0xffffffffL;
                sb.append(' ').append(((narrow << 3) + 16) % 64);
            }
            System.out.println(sb);
        }
        for (int threads : threadsList)
            try (Parallel par = new Parallel(threads)) {
                for (int m : rowsList) {
                    float[] x = new float[m * 1536], out = new float[m * 1536];
                    for (int j = 0; j < x.length; j++) x[j] = r.nextFloat() - 0.5f;
                    for (int round = 0; round < 3; round++)
                        for (int kind = 0; kind < 2; kind++) {
                            double[] t = new double[passes];
                            for (int p = 0; p < passes; p++) {
                                long t0 = System.nanoTime();
                                for (int i = 0; i < count; i++) {
                                    int k = shapes[i % shapes.length][0], n = shapes[i % shapes.length][1];
                                    if (kind == 0) QMatMul.run(par, q[i], x, out, m, null);
                                    else Gemm.gemm(par, 1, m, n, k, 1f, x, 0, 0, false, f[i], 0, 0, false, out, 0, 0,
                                            Gemm.Epilogue.NONE, pk[i]);
                                }
                                t[p] = System.nanoTime() - t0;
                            }
                            Arrays.sort(t);
                            double us = t[passes / 2] / 1e3;
                            if (round == 2)
                                System.out.printf("threads %d, %2d rows, %s: %8.1f us a pass, %5.1f GMAC/s%n", threads, m,
                                        kind == 0 ? "QMATMUL" : "fp32   ", us, m * macsPerRow / us / 1e3);
                        }
                }
            }
    }
}
