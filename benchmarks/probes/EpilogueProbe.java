import io.attn.cpu.Parallel;
import io.attn.cpu.ops.Gemm;
import java.util.Random;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * What a GEMM epilogue costs next to the product it follows: one product (B packed once, as a layer's weight) with no
 * epilogue, a bias, a bias and a residual, a bias and exact GELU, a bias and the heads layout, at one thread, 5 timed
 * rounds of 0.7 s each (best call per round), after the core's FMA peak (12 independent FMA chains, no memory). With
 * the engine built ({@code mvn -o install -DskipTests}) and a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector -cp 'cli/target/lib/*' benchmarks/probes/EpilogueProbe.java [M K N]
 * </pre>
 *
 * Measured 2026-12-07 on AMD EPYC family 26 model 2 (Zen 5, 512-bit vectors; benchmarks/RESULTS.md, fourteenth
 * session): FMA peak 233 GFLOP/s (the third of three calls; the first two run before the JIT is done); MiniLM's
 * feed-forward input shape 1490 x 384 x 1536, rounds 1-5: none 8.3-8.6 ms (205-211 GFLOP/s, about 90% of the peak),
 * bias 8.7-8.9 (+3-5%), bias and residual 9.9-10.4 (+18-23%: the residual is 9 MB read from memory), bias and GELU
 * 10.1-10.4 (+19-23%: the exact form's arithmetic, about 0.57 ns a value in L1), bias and heads 9.3-9.5 (+10-13%).
 * Applying the bias, addend, ReLU and residual in registers before the kernel's store (a 6 x 2 kernel of its own) made
 * the bias-only product as fast as the plain one here, but the all-MiniLM-L6-v2 pass, in one JVM against the code
 * without it, was 2% slower (0.982 and 1/1.021, 6 rounds each): not kept.
 */
public class EpilogueProbe {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    public static void main(String[] args) {
        int m = args.length > 0 ? Integer.parseInt(args[0]) : 1490;
        int k = args.length > 1 ? Integer.parseInt(args[1]) : 384;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 1536;
        for (int r = 0; r < 3; r++) System.out.printf("FMA peak: %.1f GFLOP/s%n", peak());
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

    /** 12 independent FMA chains on registers for about a second: the core's FMA rate. */
    private static double peak() {
        FloatVector x = FloatVector.broadcast(SP, 1.0000001f), y = FloatVector.broadcast(SP, 0.9999999f);
        FloatVector c0 = FloatVector.zero(SP), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
        FloatVector c6 = c0, c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;
        long iters = 50_000_000;
        long t0 = System.nanoTime();
        for (long i = 0; i < iters; i++) {
            c0 = x.fma(y, c0);
            c1 = x.fma(y, c1);
            c2 = x.fma(y, c2);
            c3 = x.fma(y, c3);
            c4 = x.fma(y, c4);
            c5 = x.fma(y, c5);
            c6 = x.fma(y, c6);
            c7 = x.fma(y, c7);
            c8 = x.fma(y, c8);
            c9 = x.fma(y, c9);
            c10 = x.fma(y, c10);
            c11 = x.fma(y, c11);
        }
        double s = System.nanoTime() - t0;
        float sum = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(c8).add(c9).add(c10).add(c11)
                .reduceLanes(VectorOperators.ADD);
        if (sum == 42f) System.out.println(); // keeps the chains alive
        return iters * 12.0 * SP.length() * 2 / s;
    }
}
