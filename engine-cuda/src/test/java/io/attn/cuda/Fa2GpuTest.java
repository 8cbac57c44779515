package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.ProbeResult;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import java.util.Map;

/**
 * {@link Fa2Checks} on a real GPU (compute capability 8.0+): every 16-bit flash entry, FA2 and older, on every tile
 * case of its head dim at its 16-bit bound, through the provider with {@code flash.variant}. Skipped where the probe
 * says no GPU, or where the GPU is older than 8.0. Seconds on a GPU: {@code mvn -o test -pl engine-cuda -am
 * -Dtest=Fa2GpuTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class Fa2GpuTest extends Fa2Checks {
    static final CudaBackendProvider PROVIDER = new CudaBackendProvider();
    static final ProbeResult PROBE = PROVIDER.probe();

    @Override
    String unavailable() {
        return PROBE.available() ? null : "no usable GPU: " + PROBE.reason();
    }

    @Override
    Backend open(Map<String, String> extra, Precision precision) {
        Backend b = PROVIDER.create(new BackendOptions(0, precision, extra));
        System.out.println("[cuda backend] " + b.description());
        return b;
    }

    @Override
    boolean everyCase(Attention.Variant v) {
        return true;
    }
}
