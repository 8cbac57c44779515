package io.attn.cli;

import io.attn.engine.Devices;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Precision;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options every computing command shares: device, threads, precision, backend options, verbosity. A device name
 * other than auto, cpu, cuda (or another backend on the class path), a negative thread count or an unknown precision
 * is a usage error (exit 2).
 */
final class DeviceOptions {
    String device;
    int threads;
    String precision = "fp32";

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(
            names = "--device",
            paramLabel = "auto|cpu|cuda",
            description = "Backend (default: auto, or the attn.device property / ATTN_DEVICE variable).")
    void setDevice(String d) {
        device = checkedDevice(command, d, "auto");
    }

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: one per physical core).")
    void setThreads(int t) {
        threads = checkedThreads(command, t);
    }

    @Option(
            names = "--precision",
            paramLabel = "fp32|tf32|bf16|fp16",
            description = "Arithmetic precision (default: fp32, exact). On cuda: tf32 = TF32 tensor-core GEMMs;"
                    + " bf16 / fp16 = 16-bit tensor-core GEMMs and flash attention (fp32 accumulation, sm_80+), the"
                    + " Linear weights held on the GPU in 16 bits (half their fp32 memory; layer norms, biases and"
                    + " embedding tables stay fp32). The cpu backend always computes in fp32.")
    void setPrecision(String p) {
        checkedPrecision(command, p);
        precision = p;
    }

    @Option(
            names = "--backend-opt",
            paramLabel = "KEY=VALUE",
            description =
                    "Backend option, repeatable (cuda: attention=flash|fused|unfused|cudnn, gemm=auto|cublas|kernel;"
                            + " attention=cudnn runs bf16 attention (D <= 128, a multiple of 8) and fp16 (D 64, 128), no mask or causal, on"
                            + " cuDNN 9's fused SDPA, found by cudnn.path=DIR, env ATTN_CUDNN or the Python environment's"
                            + " nvidia/cudnn/lib, and the flash path elsewhere or when cuDNN is missing (the backend line says"
                            + " which); cpu: spin-us=N, how long waiting threads spin before they sleep, default 1000).")
    Map<String, String> extra = new LinkedHashMap<>();

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    /** These options for the library's {@link Engine#open}. */
    EngineOptions engineOptions() {
        return new EngineOptions(device, threads, precision(precision), Map.copyOf(extra));
    }

    /** Opens the engine these options name (the device chosen, and why, in its description). */
    Engine open() {
        return Engine.open(engineOptions());
    }

    /** Whether the device is chosen automatically (then a device fault may fall back to the CPU). */
    boolean auto() {
        return Devices.resolve(device).equals("auto");
    }

    /**
     * {@code --device d} in lower case: {@code wildcard} (auto, or all for the suites), a backend on the class path, or
     * one whose artifact is known; else a usage error.
     */
    static String checkedDevice(CommandSpec command, String d, String wildcard) {
        String name = d.trim().toLowerCase(Locale.ROOT);
        if (!name.equals(wildcard) && (name.equals("auto") || !Devices.isKnown(name)))
            throw new ParameterException(
                    command.commandLine(), "--device " + d + ": expected " + wildcard + ", cpu or cuda");
        return name;
    }

    /** {@code --threads t}, 0 or more; else a usage error. */
    static int checkedThreads(CommandSpec command, int t) {
        if (t < 0)
            throw new ParameterException(
                    command.commandLine(), "--threads must be >= 0 (0 = one per physical core), got " + t);
        return t;
    }

    /** {@code --precision p} as a {@link Precision}; else a usage error. */
    static Precision checkedPrecision(CommandSpec command, String p) {
        try {
            return Precision.valueOf(p.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(
                    command.commandLine(), "--precision " + p + ": expected fp32, tf32, bf16 or fp16");
        }
    }

    /** A precision name already checked by {@link #setPrecision(String)}. */
    static Precision precision(String name) {
        return Precision.valueOf(name.trim().toUpperCase(Locale.ROOT));
    }
}
