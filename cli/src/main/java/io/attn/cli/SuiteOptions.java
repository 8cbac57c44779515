package io.attn.cli;

import io.attn.backend.Backends;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
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
        String name = d.trim().toLowerCase(Locale.ROOT);
        if (!name.equals("all")
                && !Backends.ARTIFACTS.containsKey(name)
                && Backends.providers().stream().noneMatch(p -> p.name().equals(name)))
            throw new ParameterException(command.commandLine(), "--device " + d + ": expected all, cpu or cuda");
        device = name;
    }

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: all cores).")
    void setThreads(int t) {
        if (t < 0)
            throw new ParameterException(command.commandLine(), "--threads must be >= 0 (0 = all cores), got " + t);
        threads = t;
    }

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    /** Whether the backend {@code name} is one to check. */
    boolean includes(String name) {
        return device.equals("all") || device.equals(name);
    }
}
