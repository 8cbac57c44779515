package io.attn.backend;

/** What a provider found when probing: whether its device is usable, a description, and if not, why. */
public record ProbeResult(String backend, boolean available, String description, String reason) {
    public static ProbeResult available(String backend, String description) {
        return new ProbeResult(backend, true, description, "");
    }

    public static ProbeResult unavailable(String backend, String reason) {
        return new ProbeResult(backend, false, "", reason);
    }

    @Override
    public String toString() {
        return backend + ": " + (available ? "available, " + description : "not available, " + reason);
    }
}
