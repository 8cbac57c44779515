package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.ProbeResult;
import io.attn.engine.Precision;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/** {@link CudaOpsChecks} on a real GPU through the provider; skipped where the probe says unavailable. */
class CudaOpsGpuTest extends CudaOpsChecks {
    static final CudaBackendProvider PROVIDER = new CudaBackendProvider();
    static final ProbeResult PROBE = PROVIDER.probe();

    @BeforeEach
    void needsGpu() {
        Assumptions.assumeTrue(PROBE.available(), "no usable GPU: " + PROBE.reason());
    }

    @org.junit.jupiter.api.Test
    void tf32MatmulIsCloseButNotExact() {
        // TF32 rounds inputs to a 10-bit mantissa (relative error <= 2^-11 per input): for k = 256 terms in [-1, 1]
        // the error stays well under 0.05 absolute; FP32 must stay within 1e-4 on the same data
        int m = 64, n = 64, k = 256;
        float[] a = rand(m * k), b = rand(k * n);
        io.attn.graph.GraphBuilder g = new io.attn.graph.GraphBuilder();
        io.attn.graph.Node na = g.input("a", m, k), nb = g.input("b", k, n);
        io.attn.graph.Node y = g.matmul(na, nb);
        double[] want = reference(a, b, 1, m, n, k, false, false, 1f, false);
        try (Backend tf32 = PROVIDER.create(new BackendOptions(0, Precision.TF32, Map.of()))) {
            System.out.println("[cuda backend] " + tf32.description());
            var in = Map.of("a", io.attn.tensor.Tensor.of(na.shape(), a), "b", io.attn.tensor.Tensor.of(nb.shape(), b));
            close("tf32 matmul", want, run(tf32, g, in, y).getFirst().data(), 5e-2, 0);
        }
    }

    /**
     * {@link HalfGemmEmulatedTest}'s case on cuBLAS: at bf16 / fp16 the Linear weights are held in 16 bits (2 bytes each,
     * the bias fp32) and the products match the double product of the RNE-rounded inputs within 16 x the fp32
     * summation bound (a first estimate for tensor-core accumulation, whose additions need not round to nearest;
     * unrounded inputs are 72x to 1070x it on the emulator). Skipped (aborted) where the GEMM path has no 16-bit inputs.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = Precision.class,
            names = {"BF16", "FP16"})
    void linearWeightsAreSixteenBitOnTheGpu(Precision p) {
        HalfGemmEmulatedTest.Case c = HalfGemmEmulatedTest.graph(11, 0);
        Backend opened;
        try {
            opened = PROVIDER.create(new BackendOptions(0, p, Map.of()));
        } catch (io.attn.AttnException e) { // below compute capability 8.0: refused by name
            Assumptions.abort(e.getMessage());
            return;
        }
        try (Backend be = opened;
                io.attn.exec.Executor ex = new io.attn.exec.Executor(be, c.graph())) {
            System.out.println("[cuda backend] " + be.description());
            var got = ex.run(Map.of("x", c.x()));
            long half = ((CudaBackend) be).constantBytes16();
            Assumptions.assumeTrue(half > 0, "no 16-bit GEMM on this path: " + be.description());
            int n = HalfGemmEmulatedTest.N, k = HalfGemmEmulatedTest.K, n2 = HalfGemmEmulatedTest.N2;
            assertEquals(2L * (n * k + k * n2), half);
            assertEquals(2L * (n * k + k * n2) + 4L * n, be.constantBytes());
            double w = HalfGemmEmulatedTest.worst(
                    c, got, v -> HalfGemmEmulatedTest.round(v, p), v -> HalfGemmEmulatedTest.round(v, p));
            System.out.printf("%s on the GPU: 16-bit GEMMs, worst error %.3f of the fp32 summation bound%n", p, w);
            assertTrue(w <= 16, p + ": error " + w + " x the bound");
        }
    }

    @Override
    Backend open(String... kv) {
        Map<String, String> extra = new HashMap<>();
        Precision precision = Precision.FP32;
        for (int i = 0; i < kv.length; i += 2)
            if (kv[i].equals("precision")) precision = Precision.valueOf(kv[i + 1].toUpperCase(java.util.Locale.ROOT));
            else extra.put(kv[i], kv[i + 1]);
        Backend b = PROVIDER.create(new BackendOptions(0, precision, extra));
        System.out.println("[cuda backend] " + b.description());
        return b;
    }

    @Override
    List<String> gemmPaths() {
        List<String> paths = new ArrayList<>(List.of("auto", "kernel"));
        if (GemmPaths.jcublasLoads() == null) paths.add("jcublas");
        return paths;
    }

    @Override
    long deviceBytes(Backend b) {
        return ((CudaBackend) b).deviceBytes();
    }
}
