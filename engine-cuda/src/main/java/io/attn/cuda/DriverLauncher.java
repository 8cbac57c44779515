package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.kernels.Kernel;
import jcuda.driver.JCudaDriver;

/**
 * {@link Launcher} on the driver API: {@code cuLaunchKernel} on one stream, arguments checked against the PTX, the
 * dynamic shared memory size passed as {@code sharedMemBytes} (above 48 KiB the function's limit is raised first:
 * {@link KernelModule#function(Kernel, KernelArgs, int)}).
 */
final class DriverLauncher implements Launcher {
    private final KernelModule kernels;
    private final RawStream stream;

    DriverLauncher(KernelModule kernels, RawStream stream) {
        this.kernels = kernels;
        this.stream = stream;
    }

    @Override
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs a) {
        check(
                JCudaDriver.cuLaunchKernel(
                        kernels.function(kernel, a, smemBytes),
                        gx,
                        gy,
                        gz,
                        threads,
                        1,
                        1,
                        smemBytes,
                        stream,
                        a.build(),
                        null),
                "cuLaunchKernel(" + kernel.entry() + ", grid " + gx + "x" + gy + "x" + gz + ", block " + threads
                        + (smemBytes > 0 ? ", dynamic shared memory " + smemBytes + " bytes" : "") + ")");
    }
}
