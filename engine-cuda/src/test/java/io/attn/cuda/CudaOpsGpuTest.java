package io.attn.cuda;

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
