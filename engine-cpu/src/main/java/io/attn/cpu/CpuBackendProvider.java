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
            String kernels = CpuInfo.kernels(); // a bad -Dattn.cpu.tiles or -Dattn.cpu.gemm.kc: say which, once
            if (kernels.startsWith("unusable: "))
                return ProbeResult.unavailable(name(), "the kernels cannot load: " + kernels.substring(10));
            return ProbeResult.available(
                    name(), CpuBackend.describe(BackendOptions.defaults().effectiveThreads()));
        } catch (LinkageError e) { // jdk.incubator.vector not added to the JVM
            return ProbeResult.unavailable(
                    name(), "the Vector API is missing (run java with --add-modules jdk.incubator.vector): " + e);
        }
    }

    /**
     * {@code host: <CPU model, family, flags, vector width>}, {@code kernels: <the tile set chosen for it>} and {@code
     * host json: <the host line as a JSON object>} (what benchmarks record beside each figure).
     */
    @Override
    public java.util.List<String> probeDetails() {
        try {
            return java.util.List.of(
                    "host: " + CpuInfo.host().describe(),
                    "threads: " + io.attn.backend.CpuCores.host().describe(),
                    "kernels: " + CpuInfo.kernels(),
                    "host json: " + CpuInfo.host().json());
        } catch (LinkageError e) { // jdk.incubator.vector missing: probe() already says so
            return java.util.List.of();
        }
    }

    /** {@code attn tune}: the GEMM's blocking measured on this machine and cached ({@link io.attn.cpu.ops.Tuner}). */
    @Override
    public io.attn.engine.Tune.Report tune(
            io.attn.engine.Tune.Request request, java.util.function.Consumer<String> progress) {
        return io.attn.cpu.ops.Tuner.run(request, progress);
    }

    /** Every op on F32 tensors ({@link CpuBackend#supports}). */
    @Override
    public io.attn.backend.OpSupport support() {
        return CpuBackend::unsupported;
    }

    @Override
    public Backend create(BackendOptions options) {
        return new CpuBackend(options);
    }
}
