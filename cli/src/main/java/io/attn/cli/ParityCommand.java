package io.attn.cli;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
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
import picocli.CommandLine.Option;

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

    @Override
    public Integer call() {
        List<ParityCase> ops = new ArrayList<>();
        for (ParityCase c : ParityCases.all()) if (matches(c.name())) ops.add(c);
        List<LayerCases.Case> layers = new ArrayList<>();
        for (LayerCases.Case c : LayerCases.cases()) if (matches(c.name())) layers.add(c);
        int failed = 0, ran = 0;
        List<String> skipped = new ArrayList<>();
        for (BackendProvider p : Backends.providers()) {
            if (!suite.includes(p.name())) continue;
            ProbeResult probe = p.probe();
            if (!probe.available()) {
                skipped.add(p.name() + " (" + probe.reason() + ")");
                continue;
            }
            try (Backend b = p.create(new BackendOptions(suite.threads, null, null))) {
                ran++;
                System.out.println("== " + p.name() + ": " + b.description());
                List<ParityResult> results = ParityHarness.runAll(ops, b);
                System.out.print(ParityReport.format(results));
                for (ParityResult r : results) if (!r.pass()) failed++;
                System.out.println();
                System.out.printf(
                        Locale.ROOT,
                        "%-52s  %-7s  %12s  %10s  %s%n",
                        "layer case",
                        "backend",
                        "rel err",
                        "bound",
                        "pass");
                for (LayerCases.Case c : layers) {
                    LayerCases.Result r = LayerCases.run(c, b);
                    if (!r.pass()) failed++;
                    System.out.printf(
                            Locale.ROOT,
                            "%-52s  %-7s  %12.3e  %10.1e  %s%n",
                            c.name(),
                            p.name(),
                            r.relErr(),
                            LayerCases.BOUND,
                            r.pass() ? "PASS" : "FAIL " + r.message());
                }
                System.out.println();
            }
        }
        for (String s : skipped) System.out.println("skipped (not passed): " + s);
        if (ran == 0) {
            System.err.println("attn: parity: no backend ran (" + suite.device + ")");
            return Main.EXIT_DEVICE;
        }
        int total = ran * (ops.size() + layers.size());
        System.out.println((total - failed) + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    private boolean matches(String name) {
        return filter == null || name.contains(filter);
    }
}
