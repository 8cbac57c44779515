package io.attn.cli;

import io.attn.engine.Devices;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code attn probe}: one line per backend, {@code name: available, what} or {@code name: not available, why} (a
 * machine without a GPU is normal, not an error), then each backend's details ({@code cuda driver: ...}, {@code cuda
 * cublas: ...}: which libraries it found where; {@code cpu host: ...}, {@code cpu kernels: ...}), then which one {@code --device auto} takes. Exit 4 only when no
 * backend is usable.
 */
@Command(name = "probe", description = "List every backend: available, or why not; and which one --device auto takes.")
final class ProbeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        List<Devices.Device> devices = Devices.probe();
        for (Devices.Device d : devices) System.out.println(d);
        for (Devices.Device d : devices) for (String line : d.details()) System.out.println(d.name() + " " + line);
        String auto = Devices.auto(devices);
        System.out.println("auto -> " + (auto == null ? "nothing usable" : auto));
        return auto == null ? Main.EXIT_DEVICE : 0;
    }
}
