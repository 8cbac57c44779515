package io.attn.backend;

/**
 * Service-provider interface, found with {@link java.util.ServiceLoader} ({@code
 * META-INF/services/io.attn.backend.BackendProvider}). Probing must never throw: native-library failures ({@link
 * LinkageError}s) are caught and reported as the reason.
 */
public interface BackendProvider {
    /** Short name matching {@link Backend#name()}: {@code cpu}, {@code cuda}. */
    String name();

    /** Preference when several are available; higher wins ({@code auto} takes the highest available). */
    int rank();

    /** Looks for the device. Cheap enough to call at start-up; never throws. */
    ProbeResult probe();

    /**
     * (optional) Extra lines for {@code attn probe}, each {@code "topic: text"} (e.g. which libraries were found
     * where); may look for files, never throws. Default: none.
     */
    default java.util.List<String> probeDetails() {
        return java.util.List.of();
    }

    /**
     * (optional) {@code attn tune}: measures the backend's tunable choices on this machine and caches them ({@link
     * io.attn.engine.Tune}); progress lines to {@code progress}. Default: null, nothing to tune.
     */
    default io.attn.engine.Tune.Report tune(
            io.attn.engine.Tune.Request request, java.util.function.Consumer<String> progress) {
        return null;
    }

    /**
     * The configurations besides the default that the parity suite must judge too: one map of {@link
     * BackendOptions#extra()} per alternative code path a user can select with an option (each attention path, each
     * GEMM path), so that no selectable path goes untested. Default: none (the backend has one path per op).
     */
    default java.util.List<java.util.Map<String, String>> parityVariants() {
        return java.util.List.of();
    }

    /**
     * (optional) What the backends this provider creates compute, declared without a device ({@link OpSupport}: the
     * rule their {@link Backend#supports} follows), for the op x backend table of {@code attn parity --support}.
     * Default: null, no declaration (the table leaves the provider out).
     */
    default OpSupport support() {
        return null;
    }

    /** Creates a backend; throws {@link io.attn.AttnException} (DEVICE_UNAVAILABLE) when it cannot. */
    Backend create(BackendOptions options);
}
