package io.attn.engine;

import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import java.util.ArrayList;
import java.util.List;

/**
 * The compute devices this process can use, without opening one: what {@code attn probe} prints and what a service
 * logs at start. Each device is a backend on the class path ({@code io.attn:engine-cpu}, {@code io.attn:engine-cuda}),
 * probed; probing never throws (a missing driver or native library is an unavailable device with its reason).
 */
public final class Devices {
    private Devices() {}

    /**
     * One device: its name ({@code cpu}, {@code cuda}), whether it can be used here, one line saying what it is (when
     * available) or why not, and its details, each {@code "topic: text"} (which libraries it found where, the CPU and
     * the kernels chosen for it).
     */
    public record Device(String name, boolean available, String line, List<String> details) {
        public Device {
            details = List.copyOf(details);
        }

        /** {@code name: available, what} or {@code name: not available, why}. */
        @Override
        public String toString() {
            return line;
        }
    }

    /** Every device on the class path, probed, in the order {@code auto} tries them (most preferred first). */
    public static List<Device> probe() {
        List<Device> out = new ArrayList<>();
        for (BackendProvider p : Backends.providers()) {
            ProbeResult r = Backends.safeProbe(p);
            List<String> details;
            try {
                details = p.probeDetails();
            } catch (RuntimeException | LinkageError e) { // must not throw; report it as a detail instead
                details = List.of("details: unknown (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
            }
            out.add(new Device(p.name(), r.available(), r.toString(), details));
        }
        return out;
    }

    /**
     * Runs {@code attn tune} on {@code device} ({@link Tune}); progress lines to {@code progress}. A device that is
     * not on the class path or has nothing to tune is a BAD_INPUT error saying so.
     */
    public static Tune.Report tune(String device, Tune.Request request, java.util.function.Consumer<String> progress) {
        for (BackendProvider p : Backends.providers())
            if (p.name().equals(device)) {
                Tune.Report r = p.tune(request, progress);
                if (r == null) throw io.attn.AttnException.badInput("device " + device + " has nothing to tune");
                return r;
            }
        throw io.attn.AttnException.badInput("device " + device + " is not on the class path");
    }

    /** The text of detail {@code topic} of {@code device} ({@code "topic: text"}), or null when it has none. */
    public static String detail(String device, String topic) {
        for (BackendProvider p : Backends.providers())
            if (p.name().equals(device)) {
                try {
                    for (String line : p.probeDetails())
                        if (line.startsWith(topic + ": ")) return line.substring(topic.length() + 2);
                } catch (RuntimeException | LinkageError e) {
                    return null;
                }
            }
        return null;
    }

    /**
     * The host CPU as benchmarks record it beside each figure: model name, family and model, AVX2 / AVX-512, the JVM's
     * vector width, cores ({@code "unknown"} without the CPU backend on the class path).
     */
    public static String hostCpu() {
        String s = detail("cpu", "host");
        return s == null ? "unknown" : s;
    }

    /** {@link #hostCpu()} as a JSON object ({@code null} without the CPU backend on the class path). */
    public static String hostCpuJson() {
        String s = detail("cpu", "host json");
        return s == null ? "null" : s;
    }

    /** The CPU backend's kernel choice for this host (its tile set), or {@code "unknown"} without it. */
    public static String cpuKernels() {
        String s = detail("cpu", "kernels");
        return s == null ? "unknown" : s;
    }

    /** The device {@code auto} takes here (the first available of {@link #probe()}), or null when none is usable. */
    public static String auto(List<Device> probed) {
        for (Device d : probed) if (d.available()) return d.name();
        return null;
    }

    /**
     * Whether {@link EngineOptions#device()} may name {@code name}: {@code auto}, a backend on the class path, or one
     * attn has a backend for (opening it then says which artifact to add).
     */
    public static boolean isKnown(String name) {
        if (name == null) return false;
        if (name.equals("auto") || Backends.ARTIFACTS.containsKey(name)) return true;
        return Backends.providers().stream().anyMatch(p -> p.name().equals(name));
    }

    /**
     * The device an {@link EngineOptions#device()} of {@code requested} means: itself in lower case if set, else the
     * system property {@code attn.device}, else the environment variable {@code ATTN_DEVICE}, else {@code auto}.
     */
    public static String resolve(String requested) {
        return Backends.resolveDevice(requested);
    }
}
