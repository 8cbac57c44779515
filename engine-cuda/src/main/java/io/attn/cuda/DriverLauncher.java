package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.kernels.Kernel;
import jcuda.driver.JCudaDriver;

/** {@link Launcher} on the driver API: {@code cuLaunchKernel} on one stream, arguments checked against the PTX. */
final class DriverLauncher implements Launcher {
    private final KernelModule kernels;
    private final RawStream stream;

    DriverLauncher(KernelModule kernels, RawStream stream) {
        this.kernels = kernels;
        this.stream = stream;
    }

    @Override
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, KernelArgs a) {
        check(
                JCudaDriver.cuLaunchKernel(
                        kernels.function(kernel, a), gx, gy, gz, threads, 1, 1, 0, stream, a.build(), null),
                "cuLaunchKernel(" + kernel.entry() + ", grid " + gx + "x" + gy + "x" + gz + ", block " + threads + ")");
    }
}
