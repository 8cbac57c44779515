import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import java.util.Random;

/**
 * What a GEMM epilogue costs next to the product it follows: one product (B packed once, as a layer's weight) with no
 * epilogue, a bias, a bias and a residual, a bias and exact GELU, a bias and the heads layout, at one thread, 5 timed
 * rounds of 0.7 s each (best call per round); the core's FMA peak to set them against is {@code ThreadsProbe fma 1}.
 * With the engine built ({@code mvn -o install -DskipTests}) and a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' benchmarks/probes/EpilogueProbe.java [M K N]
 * </pre>
 *
 * Measured 2026-12-07 on AMD EPYC family 26 model 2 (Zen 5, 512-bit vectors; benchmarks/RESULTS.md, fourteenth
 * session): FMA peak 214-219 GFLOP/s by the thread's CPU time ({@code ThreadsProbe fma 1}); MiniLM's feed-forward
 * input shape 1490 x 384 x 1536, rounds 1-5: none 8.3-8.6 ms (205-211 GFLOP/s, about 95% of the peak),
 * bias 8.7-8.9 (+3-5%), bias and residual 9.9-10.4 (+18-23%: the residual is 9 MB read from memory), bias and GELU
 * 10.1-10.4 (+19-23%: the exact form's arithmetic, about 0.57 ns a value in L1), bias and heads 9.3-9.5 (+10-13%).
 * Applying the bias, addend, ReLU and residual in registers before the kernel's store (a 6 x 2 kernel of its own) made
 * the bias-only product as fast as the plain one here, but the all-MiniLM-L6-v2 pass, in one JVM against the code
 * without it, was 2% slower (0.982 and 1/1.021, 6 rounds each): not kept.
 */
public class EpilogueProbe {
    public static void main(String[] args) {
        int m = args.length > 0 ? Integer.parseInt(args[0]) : 1490;
        int k = args.length > 1 ? Integer.parseInt(args[1]) : 384;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 1536;
        Random rnd = new Random(1);
        float[] a = new float[m * k], b = new float[n * k], c = new float[m * n], bias = new float[n];
        float[] res = new float[m * n];
        for (int i = 0; i < a.length; i++) a[i] = rnd.nextFloat() - 0.5f;
        for (int i = 0; i < b.length; i++) b[i] = rnd.nextFloat() - 0.5f;
        for (int i = 0; i < n; i++) bias[i] = rnd.nextFloat();
        for (int i = 0; i < res.length; i++) res[i] = rnd.nextFloat();
        Gemm.PackedB packed = Gemm.PackedB.of(b, 0, n, k, true);
        int heads = n % 64 == 0 ? n / 64 : 1;
        Gemm.Epilogue[] kinds = {
            Gemm.Epilogue.NONE,
            new Gemm.Epilogue(bias, Gemm.Epilogue.Act.NONE, null, 0, 0),
            new Gemm.Epilogue(bias, Gemm.Epilogue.Act.NONE, res, 0, 0),
            new Gemm.Epilogue(bias, Gemm.Epilogue.Act.GELU, null, 0, 0),
            new Gemm.Epilogue(bias, Gemm.Epilogue.Act.NONE, null, heads, m)
        };
        String[] names = {"none", "bias", "bias+residual", "bias+gelu", "bias+heads"};
        try (Parallel par = new Parallel(1)) {
            for (int round = 0; round < 6; round++) {
                for (int e = 0; e < kinds.length; e++) {
                    long best = Long.MAX_VALUE;
                    long end = System.nanoTime() + 700_000_000L;
                    while (System.nanoTime() < end) {
                        long t0 = System.nanoTime();
                        Gemm.gemm(par, 1, m, n, k, 1f, a, 0, 0, false, b, 0, 0, true, c, 0, 0, kinds[e], packed);
                        best = Math.min(best, System.nanoTime() - t0);
                    }
                    if (round > 0) // round 0 warms up
                        System.out.printf(
                                "round %d %-14s %dx%dx%d: best %.3f ms, %.1f GFLOP/s%n",
                                round, names[e], m, k, n, best / 1e6, 2.0 * m * n * k / best);
                }
            }
        }
    }
}
