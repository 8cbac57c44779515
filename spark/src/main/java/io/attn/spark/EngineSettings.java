package io.attn.spark;

import io.attn.AttnException;
import java.io.Serializable;
import java.util.Locale;
import java.util.Set;

/**
 * Where a model runs on an executor: the device ({@code auto}, {@code cpu} or {@code cuda}; which GPU is the task's
 * own, see {@link DeviceChoice}) and the CPU threads of the executor's engine ({@code 0}: the executor's cores).
 *
 * <p>Immutable and thread-safe.
 */
public record EngineSettings(String device, int threads) implements Serializable {
    /** The devices a user may ask for. */
    public static final Set<String> DEVICES = Set.of("auto", "cpu", "cuda");

    public EngineSettings {
        device = device == null ? "auto" : device.trim().toLowerCase(Locale.ROOT);
        if (!DEVICES.contains(device))
            throw AttnException.badInput("device \"" + device + "\" is not one of auto, cpu, cuda");
        if (threads < 0)
            throw AttnException.badInput("threads must be >= 0 (0 = the executor's cores), got " + threads);
    }

    /** {@code auto}, the executor's cores. */
    public static EngineSettings defaults() {
        return new EngineSettings("auto", 0);
    }
}
