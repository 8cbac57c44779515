import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import java.util.Arrays;
import java.util.Random;

/**
 * How much of a few-row weight product (one text per call) is waiting for the weights: the same 2304 x 768 product
 * (B packed once, as a layer's weight) with B hot (one B, called again and again: in L2/L3) and cold (calls cycling
 * through 40 distinct packed Bs, 283 MB, as a 22-layer model's weights are on each pass), at 1 and 2 threads, median
 * of 200 calls in the third of three rounds. With the engine built ({@code mvn -o install -DskipTests}) and a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' benchmarks/probes/ColdWeightsProbe.java
 * </pre>
 *
 * Measured 2026-12-05 on AMD EPYC family 26 model 2 (Zen 5, 512-bit vectors; benchmarks/RESULTS.md), us per call
 * hot / cold: 1 thread, 1 row 148.7 / 311.9 (B streamed at 22.7 GB/s), 8 rows 243.7 / 593.4, 25 rows 644.4 / 974.4,
 * 64 rows 1448.3 / 1760.6, 128 rows 2805.2 / 3023.2; 2 threads 70.9 / 189.9 (37 GB/s), 103.9 / 295.3, 256.7 /
 * 376.9, 588.0 / 754.0, 1268.0 / 1475.4. So a cold product of 8-25 rows
 * takes about its hot time plus the time to stream B (7 MB at the one-row rate): the fetch of the next panel's
 * weights does not overlap the FMAs on the current one (docs/performance.md, "Products of few rows").
 */
public class ColdWeightsProbe {
    static float[] rnd(int n, Random r) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = r.nextFloat() - 0.5f;
        return x;
    }

    public static void main(String[] args) throws Exception {
        int n = 2304, k = 768, copies = 40;
        Random r = new Random(1);
        float[][] bs = new float[copies][];
        Gemm.PackedB[] pbs = new Gemm.PackedB[copies];
        for (int i = 0; i < copies; i++) {
            bs[i] = rnd(n * k, r);
            pbs[i] = Gemm.PackedB.of(bs[i], 0, n, k, true);
        }
        System.out.println(io.attn.cpu.CpuInfo.host().describe() + "; " + copies + " x " + (4L * n * k >> 20) + " MB");
        for (int threads : new int[] {1, 2})
            try (Parallel par = new Parallel(threads)) {
                for (int m : new int[] {1, 8, 25, 64, 128}) {
                    float[] a = rnd(m * k, r), c = new float[m * n];
                    for (int round = 0; round < 3; round++)
                        for (int cold = 0; cold < 2; cold++) {
                            int calls = 200;
                            double[] t = new double[calls];
                            for (int i = 0; i < calls; i++) {
                                int j = cold == 1 ? i % copies : 0;
                                long t0 = System.nanoTime();
                                Gemm.gemm(par, 1, m, n, k, 1f, a, 0, 0, false, bs[j], 0, 0, true, c, 0, 0,
                                        Gemm.Epilogue.NONE, pbs[j]);
                                t[i] = System.nanoTime() - t0;
                            }
                            Arrays.sort(t);
                            double us = t[calls / 2] / 1e3;
                            if (round == 2)
                                System.out.printf(
                                        "threads %d, %d rows, B %s: %.1f us, %.0f GFLOP/s, B streamed at %.1f GB/s%n",
                                        threads, m, cold == 1 ? "cold" : "hot ", us, 2.0 * m * n * k / us / 1e3,
                                        4.0 * n * k / us / 1e3);
                        }
                }
            }
    }
}
