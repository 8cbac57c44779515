package io.attn.cuda;

import io.attn.kernels.Kernel;

/** Launches one kernel entry point (a 1-D block of {@code threads}) with the given arguments. */
@FunctionalInterface
interface Launcher {
    void launch(Kernel kernel, int gx, int gy, int gz, int threads, KernelArgs args);
}
