package io.attn.engine;

import io.attn.AttnException;
import java.util.Map;

/**
 * How an {@link Engine} is opened: the device ({@code auto}, {@code cpu}, {@code cuda}; null means the system property
 * {@code attn.device}, else the environment variable {@code ATTN_DEVICE}, else {@code auto}), the number of CPU
 * threads ({@code 0} = one per physical core, {@link io.attn.backend.CpuCores}), the arithmetic precision (FP32 unless asked; the reduced precisions
 * apply to CUDA GEMMs only) and backend-specific settings ({@code extra}, e.g. {@code cublas.path}).
 *
 * <p>An invalid argument is an {@link AttnException} BAD_INPUT, as everywhere in the library: a negative thread count
 * here, an unknown device name when {@link Engine#open} resolves it.
 *
 * <p>Immutable and thread-safe.
 */
public record EngineOptions(String device, int threads, Precision precision, Map<String, String> extra) {
    public EngineOptions {
        if (threads < 0)
            throw AttnException.badInput("threads must be >= 0 (0 = one per physical core), got " + threads);
        if (precision == null) precision = Precision.FP32;
        extra = extra == null ? Map.of() : Map.copyOf(extra);
    }

    /**
     * The CPU threads {@code threads = 0} gives here: one per physical core among the processors this process may use
     * ({@link io.attn.backend.CpuCores}).
     */
    public static int defaultThreads() {
        return io.attn.backend.CpuCores.defaultThreads();
    }

    /** Default device (see above), one thread per physical core, FP32. */
    public static EngineOptions defaults() {
        return new EngineOptions(null, 0, Precision.FP32, Map.of());
    }

    public EngineOptions withDevice(String d) {
        return new EngineOptions(d, threads, precision, extra);
    }

    public EngineOptions withThreads(int t) {
        return new EngineOptions(device, t, precision, extra);
    }

    public EngineOptions withPrecision(Precision p) {
        return new EngineOptions(device, threads, p, extra);
    }

    public EngineOptions withExtra(Map<String, String> e) {
        return new EngineOptions(device, threads, precision, e);
    }
}
