package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Precision;
import io.attn.backend.ProbeResult;
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
        double[] want = Ref.matmul(a, b, 1, m, n, k, false, false, 1f, false);
        try (Backend tf32 = PROVIDER.create(new BackendOptions(0, Precision.TF32, Map.of()))) {
            System.out.println("[cuda backend] " + tf32.description());
            var in = Map.of("a", io.attn.tensor.Tensor.of(na.shape(), a), "b", io.attn.tensor.Tensor.of(nb.shape(), b));
            close("tf32 matmul", want, run(tf32, g, in, y).getFirst().data(), 5e-2, 0);
        }
    }

    /**
     * The tensor-core flash kernels (flash_attention_bf16.cu) on the same cases as the fp32 one. Bounds: each of q, k,
     * v and the probabilities p is rounded once to 16 bits (unit round-off u = 2^-9 for bf16, 2^-12 for fp16), products
     * accumulate in fp32. A scaled score q.k / sqrt(D) then errs by about 2u sqrt(D) |q||k| / (sqrt(D) * D) ~ 2u/3 with
     * inputs uniform in [-1, 1] (random signs: the D rounding errors add like a random walk), which changes each
     * weight relatively by as much; rounding v and p adds 2u. So the output's relative error is about 3u ~ 6e-3
     * (bf16) / 7e-4 (fp16) in the typical case; the bounds below, 2e-2 and 4e-3 relative Frobenius (5e-2 and 1e-2
     * absolute per element, outputs in [-1, 1]), leave a 3-5x margin while an indexing or masking bug (O(0.1) per
     * element, O(1) relative) still fails. Needs compute capability 8.0 (skipped before).
     */
    @org.junit.jupiter.api.Test
    void flashAttention16BitTensorCores() {
        try (Backend probe = open()) {
            String d = probe.description();
            Assumptions.assumeTrue(
                    CudaBackend.precisionUnsupported(Precision.BF16, capability(d)) == null, "needs sm_80: " + d);
        }
        try (Backend be = open("precision", "bf16", "attention", "flash")) {
            System.out.println("[flash bf16] worst relative Frobenius error "
                    + flashWorst(be, new int[] {64, 128}, 2e-2, 5e-2, "flash bf16"));
        }
        try (Backend be = open("precision", "fp16", "attention", "flash")) {
            System.out.println("[flash fp16] worst relative Frobenius error "
                    + flashWorst(be, new int[] {64, 128}, 4e-3, 1e-2, "flash fp16"));
        }
    }

    /** The compute capability in a backend description ("..., sm_90, ..."), major * 10 + minor. */
    static int capability(String description) {
        var m = java.util.regex.Pattern.compile("sm_(\\d+)").matcher(description);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
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
