package io.attn.cli;

import io.attn.backend.Precision;
import io.attn.parity.LayerCases;
import io.attn.parity.ParityCase;
import io.attn.parity.ParityCases;
import io.attn.parity.ParityHarness;
import io.attn.parity.ParityReport;
import io.attn.parity.ParityResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code attn parity}: the parity suite from the bundle. Every op case (one node through {@code backend.execute},
 * guard values after the output, inputs checked untouched) and every layer case (a whole module through {@code
 * Model}) on every available backend, against the double-precision reference. Prints a table; exit 0 only when every
 * case passed on every backend that ran.
 */
@Command(
        name = "parity",
        description =
                "Run the op and layer parity suite on every available backend against the double-precision reference.")
final class ParityCommand implements Callable<Integer> {
    @Option(names = "--filter", description = "Only cases whose name contains this text.")
    String filter;

    @Mixin
    SuiteOptions suite;

    Precision precision = Precision.FP32;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--precision",
            paramLabel = "fp32|tf32|bf16|fp16",
            description = "Arithmetic the backends may use (default fp32, checked with each case's own bound). tf32: "
                    + "every case within 1e-2 relative error; bf16, fp16: within 5e-2 (tensor-core inputs rounded to "
                    + "10 or 7 mantissa bits). The cpu backend always computes in fp32.")
    void setPrecision(String p) {
        precision = DeviceOptions.checkedPrecision(spec, p);
    }

    /** The bound every case is held to at a reduced precision (the larger of it and the case's own); 0 for fp32. */
    static double precisionBound(Precision p) {
        return switch (p) {
            case FP32 -> 0;
            case TF32 -> 1e-2;
            case BF16, FP16 -> 5e-2;
        };
    }

    @Override
    public Integer call() {
        List<ParityCase> ops = new ArrayList<>();
        double loose = precisionBound(precision);
        for (ParityCase c : ParityCases.all())
            if (matches(c.name()))
                ops.add(
                        loose <= c.bound()
                                ? c
                                : new ParityCase(
                                        c.name(),
                                        c.op(),
                                        c.graph(),
                                        c.inputs(),
                                        c.seed(),
                                        loose,
                                        precision.name().toLowerCase(Locale.ROOT) + " arithmetic"));
        List<LayerCases.Case> layers = new ArrayList<>();
        for (LayerCases.Case c : LayerCases.cases()) if (matches(c.name())) layers.add(c);
        SuiteOptions.Outcome o = suite.onEachBackend("parity", precision, b -> {
            int failed = 0;
            System.out.println("== " + b.name() + ": " + b.description());
            List<ParityResult> results = ParityHarness.runAll(ops, b);
            System.out.print(ParityReport.format(results));
            for (ParityResult r : results) if (!r.pass()) failed++;
            System.out.println();
            System.out.printf(
                    Locale.ROOT, "%-52s  %-7s  %12s  %10s  %s%n", "layer case", "backend", "rel err", "bound", "pass");
            for (LayerCases.Case c : layers) {
                LayerCases.Result r = LayerCases.run(c, b);
                double bound = Math.max(LayerCases.BOUND, loose);
                boolean pass = r.pass() || r.relErr() <= bound; // NaN (a case that threw) never passes
                if (!pass) failed++;
                System.out.printf(
                        Locale.ROOT,
                        "%-52s  %-7s  %12.3e  %10.1e  %s%n",
                        c.name(),
                        b.name(),
                        r.relErr(),
                        bound,
                        pass ? "PASS" : "FAIL " + r.message());
            }
            System.out.println();
            return failed;
        });
        if (o.ran() == 0) return Main.EXIT_DEVICE;
        int failed = o.failed();
        int total = o.ran() * (ops.size() + layers.size());
        System.out.println((total - failed) + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    private boolean matches(String name) {
        return filter == null || name.contains(filter);
    }
}
