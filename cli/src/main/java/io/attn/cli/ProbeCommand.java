package io.attn.cli;

import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code attn probe}: every backend, available or why not, and which one {@code auto} picks. */
@Command(name = "probe", description = "List every backend: available, or why not; and which one --device auto takes.")
final class ProbeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        String auto = null;
        for (ProbeResult r : Backends.probeAll()) {
            System.out.printf(
                    "%-6s %-12s %s%n",
                    r.backend(),
                    r.available() ? "available" : "unavailable",
                    r.available() ? r.description() : r.reason());
            if (auto == null && r.available()) auto = r.backend();
        }
        System.out.println("auto   -> " + (auto == null ? "nothing usable" : auto));
        return auto == null ? Main.EXIT_DEVICE : 0;
    }
}
