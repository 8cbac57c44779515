package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.BackendOptions;
import io.attn.backend.ProbeResult;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

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

    /** Null when the NVIDIA driver library opens, else a user-facing reason. */
    static String driverMissing() {
        try (Arena a = Arena.ofConfined()) {
            SymbolLookup.libraryLookup(DRIVER_LIB, a);
            return null;
        } catch (IllegalArgumentException e) { // the dynamic linker found no such library: no driver installed
            return "no NVIDIA driver (" + DRIVER_LIB + " not found)";
        } catch (UnsatisfiedLinkError e) {
            return "the NVIDIA driver library " + DRIVER_LIB + " does not load (" + e.getMessage() + ")";
        } catch (RuntimeException e) {
            return "NVIDIA driver check failed: " + e;
        }
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
