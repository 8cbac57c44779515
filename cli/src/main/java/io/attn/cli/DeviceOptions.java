package io.attn.cli;

import io.attn.AttnException;
import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.backend.Precision;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options every computing command shares: device, threads, precision, backend options, verbosity. */
final class DeviceOptions {
    @Option(
            names = "--device",
            paramLabel = "auto|cpu|cuda",
            description = "Backend (default: auto, or the attn.device property / ATTN_DEVICE variable).")
    String device;

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: all cores).")
    int threads;

    @Option(
            names = "--precision",
            paramLabel = "fp32|tf32|bf16|fp16",
            description = "Arithmetic precision (default: fp32, exact). On cuda: tf32 = TF32 tensor-core GEMMs;"
                    + " bf16 / fp16 = 16-bit tensor-core GEMMs and flash attention (fp32 accumulation, sm_80+)."
                    + " The cpu backend always computes in fp32.")
    String precision = "fp32";

    @Option(
            names = "--backend-opt",
            paramLabel = "KEY=VALUE",
            description = "Backend option, repeatable (cuda: attention=flash|fused|unfused, gemm=auto|cublas|kernel).")
    Map<String, String> extra = new LinkedHashMap<>();

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    /** These options for the library's {@link Engine#open}. */
    EngineOptions engineOptions() {
        if (threads < 0) throw AttnException.badInput("--threads must be >= 0 (0 = all cores), got " + threads);
        return new EngineOptions(device, threads, precision(precision), Map.copyOf(extra));
    }

    Backends.Selection open() {
        return open(device);
    }

    /** Opens {@code name} (null: the default device) with these options. */
    Backends.Selection open(String name) {
        return Backends.open(name, new BackendOptions(threads, precision(precision), Map.copyOf(extra)));
    }

    /** Whether the device is chosen automatically (then a device fault may fall back to the CPU). */
    boolean auto() {
        return Backends.resolveDevice(device).equals("auto");
    }

    static Precision precision(String name) {
        try {
            return Precision.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw AttnException.badInput("--precision " + name + ": expected fp32, tf32, bf16 or fp16");
        }
    }
}
