package io.attn.parity;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.engine.Precision;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * One backend configuration that the parity suite judges: its name ({@code cpu}, {@code cuda}, {@code cuda
 * attention=unfused}, {@code cuda-emulated precision=bf16}, ...), the arithmetic it may use, whether it is a variant
 * (one of the provider's other paths: one that cannot start here is a skip, a default configuration that cannot is a
 * failure), and how to open it. The JUnit suite and {@code attn parity} both walk the same targets: every provider's
 * default configuration and each of its {@link BackendProvider#parityVariants()}, so a path a user can select is
 * judged like the default one.
 */
public record ParityTarget(String name, Precision precision, boolean variant, Supplier<Backend> opener) {
    public ParityTarget {
        if (name == null || name.isBlank()) throw new IllegalArgumentException("a parity target needs a name");
        if (precision == null) throw new IllegalArgumentException("target " + name + ": no precision");
    }

    /** The provider's default configuration, then one target per {@link BackendProvider#parityVariants() variant}. */
    public static List<ParityTarget> of(BackendProvider p, int threads, Precision precision) {
        List<ParityTarget> out = new ArrayList<>();
        out.add(of(p, threads, precision, Map.of()));
        for (Map<String, String> v : p.parityVariants()) out.add(of(p, threads, precision, v));
        return out;
    }

    /** One configuration of {@code p}: {@code extra} are its {@link BackendOptions#extra()} options. */
    public static ParityTarget of(BackendProvider p, int threads, Precision precision, Map<String, String> extra) {
        return new ParityTarget(
                name(p.name(), precision, extra),
                precision,
                !extra.isEmpty(),
                () -> p.create(new BackendOptions(threads, precision, extra.isEmpty() ? null : extra)));
    }

    /** {@code base}, then {@code precision=...} unless fp32, then each option as {@code key=value}, sorted by key. */
    public static String name(String base, Precision precision, Map<String, String> extra) {
        StringBuilder s = new StringBuilder(base);
        if (precision != Precision.FP32)
            s.append(" precision=").append(precision.name().toLowerCase(Locale.ROOT));
        new TreeMap<>(extra)
                .forEach((k, v) -> s.append(' ').append(k).append('=').append(v));
        return s.toString();
    }

    /** Opens the backend; the caller closes it. Throws {@link io.attn.AttnException} when it cannot start. */
    public Backend open() {
        return opener.get();
    }

    /** Opens the backend as a {@link ParitySession}; throws {@link io.attn.AttnException} when it cannot start. */
    public ParitySession session() {
        return new ParitySession(this, open());
    }

    /** What {@link #present} found: the targets to run, and each backend or variant skipped with its reason. */
    public record Present(List<ParityTarget> targets, List<String> skipped) {}

    /**
     * The targets on this host for {@code device} ({@code all}, or one backend's name): each available backend's
     * default configuration with these threads and precision, and with {@code variants} each of its {@link
     * BackendProvider#parityVariants()}. An unavailable backend is listed in {@code skipped} with its probe's reason.
     */
    public static Present present(String device, int threads, Precision precision, boolean variants) {
        List<ParityTarget> targets = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (BackendProvider p : io.attn.backend.Backends.providers()) {
            if (!device.equals("all") && !device.equals(p.name())) continue;
            io.attn.backend.ProbeResult probe = io.attn.backend.Backends.safeProbe(p);
            if (!probe.available()) {
                skipped.add(p.name() + " (" + probe.reason() + ")");
                continue;
            }
            if (variants) targets.addAll(of(p, threads, precision));
            else targets.add(of(p, threads, precision, Map.of()));
        }
        return new Present(targets, skipped);
    }

    /**
     * The relative error every case is held to at a reduced precision (used where it is larger than the case's own
     * bound); 0 for fp32, where each case keeps its own. TF32 rounds GEMM inputs to 10 mantissa bits (2^-11 relative
     * per input): 1e-2 leaves room for sums of a few hundred terms; bf16/fp16 keep 8/11 bits: 5e-2.
     */
    public static double precisionBound(Precision p) {
        return switch (p) {
            case FP32 -> 0;
            case TF32 -> 1e-2;
            case BF16, FP16 -> 5e-2;
        };
    }

    /**
     * {@code cases} as this target judges them: at fp32 each case's own bound; at a reduced precision the case's own
     * bound for it ({@link ParityCase#reduced()}) where it has one, else the precision's where that is larger.
     */
    public List<ParityCase> opCases(List<ParityCase> cases) {
        List<ParityCase> out = new ArrayList<>(cases.size());
        for (ParityCase c : cases) {
            Double own = c.reduced().get(precision);
            double loose = own != null ? own : precisionBound(precision);
            String why = precision.name().toLowerCase(Locale.ROOT) + " arithmetic"
                    + (own != null ? ": this case's bound" : "");
            out.add(
                    loose <= c.bound()
                            ? c
                            : new ParityCase(c.name(), c.op(), c.graph(), c.inputs(), c.seed(), loose, why));
        }
        return out;
    }

    /** The bound of the layer cases at this target's precision: {@link LayerCases#BOUND} or the precision's. */
    public double layerBound() {
        return Math.max(LayerCases.BOUND, precisionBound(precision));
    }

    @Override
    public String toString() {
        return name;
    }
}
