package io.attn.cli;

import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code attn probe}: one line per backend, {@code name: available, what} or {@code name: not available, why} (a
 * machine without a GPU is normal, not an error), then each backend's details ({@code cuda driver: ...}, {@code cuda
 * cublas: ...}: which libraries it found where), then which one {@code --device auto} takes. Exit 4 only when no
 * backend is usable.
 */
@Command(name = "probe", description = "List every backend: available, or why not; and which one --device auto takes.")
final class ProbeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        String auto = null;
        for (ProbeResult r : Backends.probeAll()) {
            System.out.println(r);
            if (auto == null && r.available()) auto = r.backend();
        }
        for (BackendProvider p : Backends.providers())
            for (String line : p.probeDetails()) System.out.println(p.name() + " " + line);
        System.out.println("host cpu: " + io.attn.cpu.CpuInfo.host().describe());
        System.out.println("cpu kernels: " + io.attn.cpu.CpuInfo.kernels());
        System.out.println("auto -> " + (auto == null ? "nothing usable" : auto));
        return auto == null ? Main.EXIT_DEVICE : 0;
    }
}
