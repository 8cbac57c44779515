package io.attn.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.BackendOptions;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.reference.Reference;
import io.attn.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Shared helpers for the kernel tests: random data, running a graph, its expected values from the judge ({@link
 * Reference}, engine-reference's double-precision evaluator, the one the parity suite uses), the error measure.
 */
final class Support {
    /**
     * Relative Frobenius error bound {@code ||got - want|| / ||want||} against the double-precision references. Each
     * output of these kernels is a float32 sum of K products (K up to a few hundred here), whose rounding error is
     * about {@code sqrt(K) * 2^-24 ~ 1e-6} relative for random data, plus one rounding per later step (exp,
     * division); 1e-5 leaves a 10x margin yet is ~1000x below any indexing or masking bug, which gives errors of order
     * 1e-2 to 1.
     */
    static final double TOL = 1e-5;

    private Support() {}

    static float[] rand(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (r.nextGaussian());
        return a;
    }

    static Tensor tensor(Random r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = rand(r, t.size());
        System.arraycopy(d, 0, t.data(), 0, d.length);
        return t;
    }

    static List<Tensor> run(int threads, Graph g, Map<String, Tensor> inputs) {
        try (CpuBackend be = new CpuBackend(BackendOptions.defaults().withThreads(threads));
                Executor ex = new Executor(be, g)) {
            return ex.run(inputs);
        }
    }

    /** The reference's values of {@code g}'s first output on {@code inputs}. */
    static double[] reference(Graph g, Map<String, Tensor> inputs) {
        return Reference.run(g, inputs).get(0);
    }

    static double relErr(float[] got, double[] want) {
        if (got.length != want.length) throw new AssertionError("length " + got.length + " != " + want.length);
        double num = 0, den = 0;
        for (int i = 0; i < got.length; i++) {
            double d = got[i] - want[i];
            num += d * d;
            den += want[i] * want[i];
        }
        if (den == 0) return Math.sqrt(num);
        return Math.sqrt(num / den);
    }

    static void assertClose(float[] got, double[] want, String what) {
        for (float v : got) assertTrue(Float.isFinite(v), what + ": non-finite output " + v);
        double e = relErr(got, want);
        assertTrue(e <= TOL, what + ": relative error " + e + " > " + TOL);
    }
}
