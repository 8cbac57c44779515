package io.attn.parity;

import io.attn.backend.Backend;
import java.util.List;

/**
 * One {@link ParityTarget} opened: the backend configuration the suites run their cases on, for callers that hold no
 * backend of their own ({@code attn parity}, {@code attn golden}). Not thread-safe; close it when done.
 */
public final class ParitySession implements AutoCloseable {
    private final ParityTarget target;
    private final Backend backend;

    ParitySession(ParityTarget target, Backend backend) {
        this.target = target;
        this.backend = backend;
    }

    /** The target's name ({@code cpu}, {@code cuda attention=unfused}, ...). */
    public String name() {
        return target.name();
    }

    /** The backend's own line: device, threads or GPU, precision, the paths it took. */
    public String description() {
        return backend.description();
    }

    /** Whether the backend must run every case ({@link ParityHarness#mustSupportEverything}). */
    public boolean complete() {
        return ParityHarness.mustSupportEverything(backend);
    }

    /** Runs the op cases at the target's precision ({@link ParityTarget#opCases}). */
    public List<ParityResult> runOps(List<ParityCase> cases) {
        return ParityHarness.runAll(target.opCases(cases), backend);
    }

    /** Why this backend cannot run the layer case by design ({@link LayerCases#unsupported}), or null. */
    public String unsupported(LayerCases.Case c) {
        return LayerCases.unsupported(c, backend);
    }

    /** Runs a layer case against the target's bound ({@link ParityTarget#layerBound}). */
    public LayerCases.Result runLayer(LayerCases.Case c) {
        return LayerCases.run(c, backend, target.layerBound());
    }

    /** The bound {@link #runLayer} holds each layer case to. */
    public double layerBound() {
        return target.layerBound();
    }

    /** Runs a PyTorch golden case. */
    public GoldenCases.Result runGolden(GoldenCases.Case c) {
        return GoldenCases.run(c, backend);
    }

    @Override
    public void close() {
        backend.close();
    }
}
