package io.attn.cpu;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.ProbeResult;

/** Provides the {@link CpuBackend}: always available, rank 10 (below accelerators). */
public final class CpuBackendProvider implements BackendProvider {
    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public int rank() {
        return 10;
    }

    @Override
    public ProbeResult probe() {
        try {
            return ProbeResult.available(
                    name(), CpuBackend.describe(BackendOptions.defaults().effectiveThreads()));
        } catch (LinkageError e) { // jdk.incubator.vector not added to the JVM
            return ProbeResult.unavailable(
                    name(), "the Vector API is missing (run java with --add-modules jdk.incubator.vector): " + e);
        }
    }

    @Override
    public Backend create(BackendOptions options) {
        return new CpuBackend(options);
    }
}
