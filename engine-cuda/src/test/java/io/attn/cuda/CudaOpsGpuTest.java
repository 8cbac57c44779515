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

    @Override
    Backend open(String... kv) {
        Map<String, String> extra = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) extra.put(kv[i], kv[i + 1]);
        Backend b = PROVIDER.create(new BackendOptions(0, Precision.FP32, extra));
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
