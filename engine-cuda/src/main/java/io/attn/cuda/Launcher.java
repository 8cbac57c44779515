package io.attn.cuda;

import io.attn.kernels.Kernel;

/**
 * Launches one kernel entry point (a 1-D block of {@code threads}) with the given arguments and {@code smemBytes} of
 * dynamic shared memory per block (0 for the kernels whose shared memory is static).
 */
@FunctionalInterface
interface Launcher {
    void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs args);

    /** A launch without dynamic shared memory. */
    default void launch(Kernel kernel, int gx, int gy, int gz, int threads, KernelArgs args) {
        launch(kernel, gx, gy, gz, threads, 0, args);
    }
}
