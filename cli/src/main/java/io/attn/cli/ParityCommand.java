package io.attn.cli;

import io.attn.engine.Precision;
import io.attn.parity.LayerCases;
import io.attn.parity.ParityCase;
import io.attn.parity.ParityCases;
import io.attn.parity.ParityReport;
import io.attn.parity.ParityResult;
import io.attn.parity.SupportTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code attn parity}: the parity suite from the bundle. Every op case (one node through {@code backend.execute},
 * guard values after the output, inputs checked untouched) and every layer case (a whole module through {@code
 * Model}) on every available backend, against the double-precision reference. Prints a table; exit 0 only when every
 * case passed on every backend that ran. {@code --support}: the op x backend support table instead ({@link
 * SupportTable}; {@code --markdown} writes {@code docs/ops.md}).
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

    @Option(
            names = "--variants",
            description = "Also judge each backend's other selectable paths (cuda: fused and unfused attention, the "
                    + "GEMMs on our kernel and on JCublas), each as its own backend configuration.")
    boolean variants;

    @Option(
            names = "--support",
            description = "Print the op x backend support table instead of running the suite: every op against each"
                    + " backend's declaration of what it computes, asked about every parity case of the op (needs no"
                    + " device).")
    boolean support;

    @Option(names = "--markdown", description = "With --support: the table as markdown, as docs/ops.md holds it.")
    boolean markdown;

    @Override
    public Integer call() {
        if (markdown && !support) throw new ParameterException(spec.commandLine(), "--markdown goes with --support");
        if (support) {
            System.out.print(SupportTable.format(suite.device, markdown));
            return 0;
        }
        List<ParityCase> ops = new ArrayList<>();
        for (ParityCase c : ParityCases.all()) if (matches(c.name())) ops.add(c);
        List<LayerCases.Case> layers = new ArrayList<>();
        for (LayerCases.Case c : LayerCases.cases()) if (matches(c.name())) layers.add(c);
        int[] skipped = {0}; // cases a backend declared unsupported: neither passed nor failed
        SuiteOptions.Outcome o = suite.onEachBackend("parity", precision, variants, s -> {
            int failed = 0;
            System.out.println("== " + s.name() + ": " + s.description());
            boolean complete = s.complete();
            List<ParityResult> results = s.runOps(ops);
            System.out.print(ParityReport.format(results));
            for (ParityResult r : results)
                if (r.unsupported() && !complete) skipped[0]++;
                else if (!r.pass()) failed++;
            System.out.println();
            System.out.printf(
                    Locale.ROOT, "%-52s  %-7s  %12s  %10s  %s%n", "layer case", "backend", "rel err", "bound", "pass");
            for (LayerCases.Case c : layers) {
                String why = s.unsupported(c);
                if (why != null && !complete) {
                    skipped[0]++;
                    System.out.printf(
                            Locale.ROOT, "%-52s  %-7s  %12s  %10s  SKIP %s%n", c.name(), s.name(), "", "", why);
                    continue;
                }
                double bound = s.layerBound();
                LayerCases.Result r = s.runLayer(c);
                boolean pass = r.pass(); // NaN (a case that threw) never passes
                if (!pass) failed++;
                System.out.printf(
                        Locale.ROOT,
                        "%-52s  %-7s  %12.3e  %10.1e  %s%n",
                        c.name(),
                        s.name(),
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
        System.out.println((total - failed - skipped[0]) + " passed, " + failed + " failed"
                + (skipped[0] > 0 ? ", " + skipped[0] + " skipped (not supported by the backend)" : ""));
        return failed == 0 ? 0 : 1;
    }

    private boolean matches(String name) {
        return filter == null || name.contains(filter);
    }
}
