package io.attn.cli;

import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.backend.Precision;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options every computing command shares: device, threads, verbosity. */
final class DeviceOptions {
    @Option(
            names = "--device",
            paramLabel = "auto|cpu|cuda",
            description = "Backend (default: auto, or the attn.device property / ATTN_DEVICE variable).")
    String device;

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: all cores).")
    int threads;

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    Backends.Selection open() {
        return Backends.open(device, new BackendOptions(threads, Precision.FP32, Map.of()));
    }
}
