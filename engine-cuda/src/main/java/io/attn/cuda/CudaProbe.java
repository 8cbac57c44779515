package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.BackendOptions;
import io.attn.backend.ProbeResult;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The probing steps, kept out of {@link CudaBackendProvider} so that the provider class loads without touching
 * JCuda. Order: (1) {@code libcuda.so.1} opens through {@code java.lang.foreign} (a clean "no driver" reason, before
 * any JNI); (2) the JCuda driver bindings load (an {@link UnsatisfiedLinkError} at class init, then {@link
 * NoClassDefFoundError} on every later touch: the first failure is remembered and reported every time); (3) cuInit,
 * device count, the device's name, compute capability (7.5+ required), memory and the driver version (CUDA 13+
 * required: the PTX is ISA 9.0); (4) which GEMM
 * path would be used.
 */
@SuppressWarnings("restricted")
final class CudaProbe {
    static final String DRIVER_LIB = "libcuda.so.1";
    static final String DEVICE_OPTION = "cuda.device";
    private static volatile String bindingFailure; // first JCuda load failure, reported from then on

    private CudaProbe() {}

    static ProbeResult probe(BackendOptions options) {
        return probe(options, true);
    }

    /** {@code checkDriverFirst = false} skips step 1 (tests use it to reach the JCuda load failure). */
    static ProbeResult probe(BackendOptions options, boolean checkDriverFirst) {
        try {
            if (checkDriverFirst) {
                String noDriver = driverMissing();
                if (noDriver != null) return ProbeResult.unavailable("cuda", noDriver);
            }
            String bindings = loadBindings();
            if (bindings != null) return ProbeResult.unavailable("cuda", bindings);
            DeviceInfo info = DeviceInfo.query(ordinal(options));
            String unsupported = info.unsupportedReason();
            if (unsupported != null) return ProbeResult.unavailable("cuda", unsupported);
            return ProbeResult.available("cuda", info.describe() + "; gemm: " + GemmPaths.wouldUse(options.extra()));
        } catch (AttnException e) {
            return ProbeResult.unavailable("cuda", e.getMessage());
        } catch (Throwable t) {
            return ProbeResult.unavailable("cuda", Cuda.linkReason(t));
        }
    }

    /**
     * Where the driver library is looked for when the dynamic linker does not find it (containers and some
     * distributions install it outside the ldconfig cache): Debian/Ubuntu, Red Hat, the NVIDIA container toolkit's
     * mount, WSL, Debian's nvidia/current, NixOS.
     */
    static final List<Path> DRIVER_DIRS = Stream.of(
                    "/usr/lib/x86_64-linux-gnu",
                    "/usr/lib64",
                    "/usr/local/nvidia/lib64",
                    "/usr/local/nvidia/lib",
                    "/usr/lib/wsl/lib",
                    "/usr/lib/x86_64-linux-gnu/nvidia/current",
                    "/usr/lib/nvidia",
                    "/run/opengl-driver/lib",
                    "/usr/lib")
            .map(Path::of)
            .toList();

    private static volatile String driverWhere; // where libcuda.so.1 was found, once it was

    /** Null when the NVIDIA driver library opens, else a user-facing reason. */
    static String driverMissing() {
        if (driverWhere != null) return null;
        DriverSearch d = findDriver(DRIVER_DIRS);
        if (d.where() != null) driverWhere = d.where();
        return d.reason();
    }

    /** Where {@code libcuda.so.1} was found ({@code reason} null), or why not ({@code where} null). */
    record DriverSearch(String where, String reason) {}

    /**
     * Opens the NVIDIA driver library through the dynamic linker, else from the first of {@code dirs} that holds one
     * (it is then kept loaded, so that JCuda's JNI library, which needs {@code libcuda.so.1}, binds to it).
     */
    static DriverSearch findDriver(List<Path> dirs) {
        try (Arena a = Arena.ofConfined()) {
            SymbolLookup.libraryLookup(DRIVER_LIB, a);
            return new DriverSearch("the dynamic linker's search", null);
        } catch (IllegalArgumentException e) { // the dynamic linker found no such library: look in the usual places
            List<String> failed = new ArrayList<>();
            for (Path dir : dirs) {
                Path f = dir.resolve(DRIVER_LIB);
                if (!Files.exists(f)) continue;
                try {
                    SymbolLookup.libraryLookup(f, Arena.global());
                    return new DriverSearch(f + ", not on the linker path", null);
                } catch (IllegalArgumentException | UnsatisfiedLinkError le) {
                    failed.add(f + " does not load (" + le.getMessage() + ")");
                }
            }
            return new DriverSearch(
                    null,
                    "no NVIDIA driver (" + DRIVER_LIB + " not found"
                            + (failed.isEmpty() ? "" : "; " + String.join("; ", failed)) + ")");
        } catch (UnsatisfiedLinkError e) {
            return new DriverSearch(
                    null, "the NVIDIA driver library " + DRIVER_LIB + " does not load (" + e.getMessage() + ")");
        } catch (RuntimeException e) {
            return new DriverSearch(null, "NVIDIA driver check failed: " + e);
        }
    }

    /**
     * One line for {@code attn probe}: where {@code libcuda.so.1} was found, or the places looked. Never throws.
     */
    static String driverLine() {
        String missing = driverMissing();
        if (missing != null)
            return missing + "; looked on the linker path (LD_LIBRARY_PATH, ldconfig) and in "
                    + DRIVER_DIRS.stream().map(Path::toString).collect(Collectors.joining(", "));
        return DRIVER_LIB + " from " + driverWhere;
    }

    /** Null when JCuda's driver bindings are usable, else why not (the first failure, every time). */
    static String loadBindings() {
        String prior = bindingFailure;
        if (prior != null) return prior;
        try {
            jcuda.driver.JCudaDriver.setExceptionsEnabled(
                    false); // class init loads libJCudaDriver (needs libcuda.so.1)
            return null;
        } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError, SecurityException...
            String msg = "JCuda driver bindings failed to load (" + Cuda.linkReason(t)
                    + "); the NVIDIA driver (libcuda.so.1) is missing or unusable";
            bindingFailure = msg;
            return msg;
        }
    }

    static int ordinal(BackendOptions options) {
        String v = options.extra().getOrDefault(DEVICE_OPTION, "0").trim();
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw AttnException.badInput("option " + DEVICE_OPTION + "=" + v + " is not a device number");
        }
    }
}
