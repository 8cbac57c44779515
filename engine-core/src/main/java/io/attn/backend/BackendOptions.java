package io.attn.backend;

import io.attn.engine.Precision;
import java.util.Map;

/**
 * Options a backend is created with. {@code threads <= 0} means "one per physical core" ({@link CpuCores}); {@code
 * extra} carries
 * backend-specific settings (e.g. {@code cublas.path}).
 */
public record BackendOptions(int threads, Precision precision, Map<String, String> extra) {
    public BackendOptions {
        if (precision == null) precision = Precision.FP32;
        extra = extra == null ? Map.of() : Map.copyOf(extra);
    }

    public static BackendOptions defaults() {
        return new BackendOptions(0, Precision.FP32, Map.of());
    }

    public BackendOptions withThreads(int t) {
        return new BackendOptions(t, precision, extra);
    }

    /** Threads to use: {@code threads}, or one per physical core when not set ({@link CpuCores#defaultThreads}). */
    public int effectiveThreads() {
        return threads > 0 ? threads : CpuCores.defaultThreads();
    }
}
