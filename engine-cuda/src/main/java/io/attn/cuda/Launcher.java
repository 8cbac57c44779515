package io.attn.cuda;

/** Launches one kernel entry point (a 1-D block of {@code threads}) with the given arguments. */
@FunctionalInterface
interface Launcher {
    void launch(String file, String entry, int gx, int gy, int gz, int threads, KernelArgs args);
}
