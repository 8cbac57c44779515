package io.attn.cli;

import io.attn.engine.Devices;
import io.attn.engine.Tune;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code attn tune}: the CPU backend's GEMM blocking measured on this machine (about 30 s) and cached for this CPU in
 * the user's cache directory, where every later JVM on the same CPU takes it (docs/performance.md, "Tuning on the
 * machine"). Progress on stderr; what was found on stdout, with {@code --print} the table entry to add for this CPU,
 * with {@code --json FILE} the figures as JSON, with {@code --sweep} every blocking of the searched space timed too.
 */
@Command(
        name = "tune",
        description =
                "Measure the CPU backend's GEMM blocking and causal attention's key tile on this machine (about 30 s) and cache them for this CPU.")
final class TuneCommand implements Callable<Integer> {
    @Option(
            names = "--seconds",
            defaultValue = "30",
            description = "The search's budget in seconds (default ${DEFAULT-VALUE}).")
    double seconds;

    @Option(names = "--print", description = "Also print the table entry to add for this CPU (engine-cpu's Tuning).")
    boolean print;

    @Option(
            names = "--sweep",
            description = "Then time every blocking of the searched space, to judge the search (minutes).")
    boolean sweep;

    @Option(
            names = "--sweep-rounds",
            defaultValue = "3",
            description = "Rounds per blocking of --sweep (default ${DEFAULT-VALUE}).")
    int sweepRounds;

    @Option(names = "--no-save", description = "Measure only; leave the cache as it is.")
    boolean noSave;

    @Option(names = "--json", paramLabel = "FILE", description = "Write the figures as JSON to FILE.")
    Path json;

    @Override
    public Integer call() throws Exception {
        if (!(seconds >= 0 && seconds <= 3600))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--seconds must be 0 to 3600, not " + seconds);
        if (sweepRounds < 1 || sweepRounds > 100)
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--sweep-rounds must be 1 to 100, not " + sweepRounds);
        System.err.println("cpu host: " + Devices.hostCpu());
        Tune.Report r = Devices.tune(
                "cpu", new Tune.Request(seconds, sweep, sweepRounds, !noSave), line -> System.err.println(line));
        for (String line : r.lines()) System.out.println(line);
        if (print) System.out.println("table entry: " + r.tableEntry());
        if (json != null) Files.writeString(json, r.json() + "\n");
        System.out.println(r.json().length() > 2000 ? "(figures: --json FILE)" : r.json());
        return 0;
    }
}
