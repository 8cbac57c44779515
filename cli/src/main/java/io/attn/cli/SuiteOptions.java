package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Precision;
import io.attn.parity.ParitySession;
import io.attn.parity.ParityTarget;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options of the suites that run on every available backend ({@code attn parity}, {@code attn golden}): which
 * backends, CPU threads, verbosity. A device name other than all, cpu or cuda (or another backend on the class path)
 * and a negative thread count are usage errors (exit 2), as in {@link DeviceOptions}.
 */
final class SuiteOptions {
    String device = "all";
    int threads;

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(
            names = "--device",
            paramLabel = "all|cpu|cuda",
            description = "Backend(s) to check (default: all available).")
    void setDevice(String d) {
        device = DeviceOptions.checkedDevice(command, d, "all");
    }

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: one per physical core).")
    void setThreads(int t) {
        threads = DeviceOptions.checkedThreads(command, t);
    }

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    /** Whether the backend {@code name} is one to check. */
    boolean includes(String name) {
        return device.equals("all") || device.equals(name);
    }

    /** How a suite went: on how many backends it ran, and how many cases failed on them. */
    record Outcome(int ran, int failed) {}

    /** One suite's work on one backend configuration; returns the number of cases that failed. */
    interface Suite {
        int run(ParitySession session);
    }

    /**
     * Runs {@code suite} on each selected backend that is available, created with these threads and {@code
     * precision}: its default configuration and, with {@code variants}, each of its parity variants (a variant that
     * cannot start here is listed as skipped). Then lists the backends skipped, and says so on stderr when none ran.
     */
    Outcome onEachBackend(String command, Precision precision, boolean variants, Suite suite) {
        int failed = 0, ran = 0;
        ParityTarget.Present present = ParityTarget.present(device, threads, precision, variants);
        List<String> skipped = new ArrayList<>(present.skipped());
        for (ParityTarget t : present.targets()) {
            ParitySession s;
            try {
                s = t.session();
            } catch (AttnException e) {
                if (!t.variant()) throw e; // a default configuration the probe called available: a failure
                skipped.add(t.name() + " (" + e.getMessage() + ")");
                continue;
            }
            try (s) {
                ran++;
                failed += suite.run(s);
            }
        }
        for (String x : skipped) System.out.println("skipped (not passed): " + x);
        if (ran == 0) System.err.println("attn: " + command + ": no backend ran (" + device + ")");
        return new Outcome(ran, failed);
    }
}
