package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.kernels.Kernel;
import io.attn.tensor.DType;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

/**
 * {@link OpSink} on the driver API: pooled device memory, copies and launches on the context's one stream.
 *
 * <p>Copies use {@code cuMemcpy*Async} on the stream from Java arrays (pageable memory) followed by a stream sync: for
 * pageable memory the driver returns from an HtoD copy once the source is staged and from a DtoH copy once it is
 * complete, and JCuda releases the array only after the call, so the array is never read or written after return.
 */
final class DriverSink implements OpSink {
    private final CudaContext ctx;
    private final DevicePool pool;
    private final Launcher launcher;
    private final DevPtr errWord; // 4 bytes, kept at 0 between embedding launches

    DriverSink(CudaContext ctx, DevicePool pool, Launcher launcher) {
        this.ctx = ctx;
        this.pool = pool;
        this.launcher = launcher;
        this.errWord = pool.take(4);
        zero(errWord, 1);
        ctx.sync("clearing the error word");
    }

    @Override
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs a) {
        launcher.launch(kernel, gx, gy, gz, threads, smemBytes, a);
    }

    @Override
    public CudaBuffer allocate(DType dtype, long elements) {
        return new CudaBuffer(pool.take(Math.max(1, elements) * dtype.byteSize()), dtype, elements, pool);
    }

    @Override
    public void upload(float[] src, int count, CudaBuffer dst) {
        check(
                JCudaDriver.cuMemcpyHtoDAsync(dst.ptr(), Pointer.to(src), 4L * count, ctx.stream()),
                "cuMemcpyHtoDAsync(" + 4L * count + " bytes)");
        ctx.sync("upload of " + count + " floats");
    }

    @Override
    public void download(CudaBuffer src, float[] dst, int count, String after) {
        check(
                JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(dst), src.ptr(), 4L * count, ctx.stream()),
                "cuMemcpyDtoHAsync(" + 4L * count + " bytes, after " + after + ")");
        ctx.sync(after + " and download");
    }

    @Override
    public void sync(String after) {
        ctx.sync(after);
    }

    @Override
    public void zero(DevPtr p, long n) {
        check(JCudaDriver.cuMemsetD32Async(p, 0, n, ctx.stream()), "cuMemsetD32Async(" + n + " floats)");
    }

    @Override
    public long errorWord() {
        return errWord.address();
    }

    @Override
    public int takeError(String after) {
        int[] err = {0};
        check(
                JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(err), errWord, 4, ctx.stream()),
                "cuMemcpyDtoHAsync(error word)");
        ctx.sync(after);
        if (err[0] != 0) zero(errWord, 1);
        return err[0];
    }
}
