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
        return open(device);
    }

    /** Opens {@code name} (null: the default device) with these options. */
    Backends.Selection open(String name) {
        return Backends.open(name, new BackendOptions(threads, Precision.FP32, Map.of()));
    }

    /** Whether the device is chosen automatically (then a device fault may fall back to the CPU). */
    boolean auto() {
        return Backends.resolveDevice(device).equals("auto");
    }
}
