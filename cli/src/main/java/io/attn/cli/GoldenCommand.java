package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Precision;
import io.attn.parity.GoldenCases;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attn golden DIR}: the PyTorch golden cases written by {@code tools/golden_torch.py} (the repository's own,
 * from torch 1.13, are in {@code tests/golden}) run through the engine on every available backend, or the one {@code
 * --device} names, and compared with PyTorch's float64 outputs ({@link GoldenCases}). Prints a table per backend, a
 * {@code skipped (not passed)} line for each backend that is not available, and {@code N passed, M failed}; exit 0
 * only when every case passed on every backend that ran, 3 when DIR is not a readable golden folder, 4 when no
 * backend ran.
 */
@Command(
        name = "golden",
        description = "Compare the engine with PyTorch golden cases (made by tools/golden_torch.py) in DIR, on every"
                + " available backend.")
final class GoldenCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", description = "Folder written by tools/golden_torch.py (holds index.json).")
    Path dir;

    @Option(names = "--filter", description = "Only cases whose name contains this text.")
    String filter;

    @Mixin
    SuiteOptions suite;

    @Override
    public Integer call() {
        List<GoldenCases.Case> cases = new ArrayList<>();
        for (GoldenCases.Case c : GoldenCases.load(dir)) // a missing or malformed folder: BAD_INPUT, exit 3
        if (filter == null || c.name().contains(filter)) cases.add(c);
        if (cases.isEmpty()) throw AttnException.badInput(dir + ": no case name contains \"" + filter + "\"");
        SuiteOptions.Outcome o = suite.onEachBackend("golden", Precision.FP32, false, s -> {
            int failed = 0;
            System.out.println(
                    "golden: " + dir + ", " + cases.size() + " cases on " + s.name() + " (" + s.description() + ")");
            System.out.printf(
                    Locale.ROOT,
                    "%-34s  %-28s  %-7s  %10s  %10s  %s%n",
                    "case",
                    "module",
                    "backend",
                    "rel err",
                    "torch f32",
                    "result");
            for (GoldenCases.Case c : cases) {
                GoldenCases.Result r = s.runGolden(c);
                if (!r.pass()) failed++;
                System.out.printf(
                        Locale.ROOT,
                        "%-34s  %-28s  %-7s  %10.3e  %10.3e  %s%n",
                        r.name(),
                        r.module(),
                        r.backend(),
                        r.relErr(),
                        r.torch32RelErr(),
                        r.pass() ? "PASS" : "FAIL " + r.message());
            }
            System.out.println();
            return failed;
        });
        if (o.ran() == 0) return Main.EXIT_DEVICE;
        int failed = o.failed();
        System.out.println("bound: relative error <= " + GoldenCases.BOUND + " against PyTorch float64");
        System.out.println((o.ran() * cases.size() - failed) + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
