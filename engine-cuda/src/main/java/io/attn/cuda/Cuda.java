package io.attn.cuda;

import io.attn.AttnException;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Turns driver-API status codes into {@link AttnException}s. Every JCuda call in this package goes through {@link
 * #check}; JCuda's own exceptions stay disabled (its default), so a failure always names our call.
 */
final class Cuda {
    private Cuda() {}

    /**
     * Throws unless {@code status} is {@code CUDA_SUCCESS}. {@code call} names the call and its key arguments, e.g.
     * {@code "cuMemAlloc(268435456 bytes)"}. Out-of-memory gives code DEVICE_OUT_OF_MEMORY with the device's free
     * memory (from {@code cuMemGetInfo}) in the message; anything else is INTERNAL.
     */
    static void check(int status, String call) {
        if (status == CUresult.CUDA_SUCCESS) return;
        String err = CUresult.stringFor(status);
        if (status == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new AttnException(
                    AttnException.Code.DEVICE_OUT_OF_MEMORY,
                    "CUDA out of memory in " + call + "; " + memInfo() + " (" + err + ")");
        }
        throw new AttnException(
                AttnException.Code.INTERNAL, "CUDA call " + call + " failed: " + err + describe(status));
    }

    /** "free X MiB of Y MiB" from cuMemGetInfo, or why it is not known. */
    static String memInfo() {
        try {
            long[] free = {0}, total = {0};
            int st = JCudaDriver.cuMemGetInfo(free, total);
            if (st != CUresult.CUDA_SUCCESS) return "free memory unknown (" + CUresult.stringFor(st) + ")";
            return "device has " + mib(free[0]) + " free of " + mib(total[0]);
        } catch (Throwable t) {
            return "free memory unknown (" + linkReason(t) + ")";
        }
    }

    static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
    }

    private static String describe(int status) {
        try {
            String[] s = {null};
            if (JCudaDriver.cuGetErrorString(status, s) == CUresult.CUDA_SUCCESS && s[0] != null)
                return " (" + s[0] + ")";
        } catch (Throwable ignored) {
            // the name alone is enough
        }
        return "";
    }

    /**
     * One line out of a native-library failure. JCuda's loader puts both attempts' stack traces in the message; the
     * line naming the missing or broken shared object (what dlopen said) is the useful one.
     */
    static String linkReason(Throwable t) {
        // the dlopen line may sit in a cause (NoClassDefFoundError -> ExceptionInInitializerError -> the first failure)
        for (Throwable c = t; c != null; c = c.getCause()) {
            for (String line : String.valueOf(c.getMessage()).split("\\R")) {
                if (line.contains("cannot open shared object")
                        || line.contains("undefined symbol")
                        || line.contains("version `"))
                    return t.getClass().getSimpleName() + ": "
                            + line.replaceFirst("^.*UnsatisfiedLinkError: ", "").trim();
            }
        }
        return t.getClass().getSimpleName() + ": "
                + String.valueOf(t.getMessage()).lines().findFirst().orElse("").trim();
    }
}
