package io.attn.backend;

import io.attn.AttnException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Finds backend providers and picks one. The device is chosen by, in order: the explicit argument, the system property
 * {@code attn.device}, the environment variable {@code ATTN_DEVICE}, else {@code auto}. {@code auto} takes the
 * highest-ranked provider whose probe says available.
 */
public final class Backends {
    private Backends() {}

    /** The devices attn has backends for, and the artifact that brings each. */
    public static final Map<String, String> ARTIFACTS =
            Map.of("cpu", "io.attn:engine-cpu", "cuda", "io.attn:engine-cuda");

    /** A chosen backend and a line saying why it was chosen (for "which device ran it" messages). */
    public record Selection(Backend backend, String reason) {}

    /** Every provider on the class path, highest rank first. */
    public static List<BackendProvider> providers() {
        List<BackendProvider> out = new ArrayList<>();
        var it = ServiceLoader.load(BackendProvider.class).iterator();
        while (true) {
            try {
                if (!it.hasNext()) break;
                out.add(it.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                // a provider that cannot even be instantiated is skipped; probe() reports the usable ones
            }
        }
        out.sort(Comparator.comparingInt(BackendProvider::rank).reversed());
        return out;
    }

    /** Probes every provider (never throws). */
    public static List<ProbeResult> probeAll() {
        List<ProbeResult> r = new ArrayList<>();
        for (BackendProvider p : providers()) r.add(safeProbe(p));
        return r;
    }

    /** Probes {@code p}; never throws (a failure is an unavailable result with its reason). */
    public static ProbeResult safeProbe(BackendProvider p) {
        try {
            return p.probe();
        } catch (Throwable t) { // LinkageError from native libraries included: report, never crash
            return ProbeResult.unavailable(p.name(), t.getClass().getSimpleName() + ": " + t.getMessage());
        }
    }

    /** The device name to use: {@code requested} if non-null, else property, env, or {@code auto}. */
    public static String resolveDevice(String requested) {
        String d = requested;
        if (d == null || d.isBlank()) d = System.getProperty("attn.device");
        if (d == null || d.isBlank()) d = System.getenv("ATTN_DEVICE");
        if (d == null || d.isBlank()) d = "auto";
        return d.trim().toLowerCase(Locale.ROOT);
    }

    /**
     * Opens the backend for {@code device} ({@code auto|cpu|cuda|...}, null for the default).
     *
     * @throws AttnException DEVICE_UNAVAILABLE when a named device cannot be used (no device, or its backend not on
     *     the class path: the message names the artifact), BAD_INPUT for an unknown name
     */
    public static Selection open(String device, BackendOptions options) {
        String d = resolveDevice(device);
        List<BackendProvider> ps = providers();
        if (d.equals("auto")) {
            StringBuilder skipped = new StringBuilder();
            for (BackendProvider p : ps) {
                ProbeResult r = safeProbe(p);
                if (!r.available()) {
                    skipped.append("; ")
                            .append(p.name())
                            .append(" not available: ")
                            .append(r.reason());
                    continue;
                }
                try {
                    Backend b = p.create(options);
                    return new Selection(b, "auto: " + p.name() + " (" + b.description() + ")" + skipped);
                } catch (AttnException | LinkageError e) {
                    skipped.append("; ").append(p.name()).append(" failed: ").append(e.getMessage());
                }
            }
            throw new AttnException(
                    AttnException.Code.DEVICE_UNAVAILABLE,
                    ps.isEmpty()
                            ? "no backend is on the class path (add the artifact " + ARTIFACTS.get("cpu") + " and/or "
                                    + ARTIFACTS.get("cuda") + ")"
                            : "no backend is usable" + skipped);
        }
        for (BackendProvider p : ps) {
            if (!p.name().equals(d)) continue;
            ProbeResult r = safeProbe(p);
            if (!r.available())
                throw new AttnException(
                        AttnException.Code.DEVICE_UNAVAILABLE, "device '" + d + "' is not usable: " + r.reason());
            try {
                Backend b = p.create(options);
                return new Selection(b, d + " (" + b.description() + ")");
            } catch (LinkageError e) {
                throw new AttnException(
                        AttnException.Code.DEVICE_UNAVAILABLE, "device '" + d + "' is not usable: " + e, e);
            }
        }
        String artifact = ARTIFACTS.get(d);
        if (artifact != null)
            throw new AttnException(
                    AttnException.Code.DEVICE_UNAVAILABLE,
                    "device '" + d + "' is not available: its backend is not on the class path (add the artifact "
                            + artifact + ")");
        throw AttnException.badInput("unknown device '" + d + "': expected auto, cpu or cuda");
    }
}
