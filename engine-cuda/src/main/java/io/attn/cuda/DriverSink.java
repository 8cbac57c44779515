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
 *
 * <p>With {@code -Dattn.cuda.pinned=true} the copies go through one page-locked host buffer instead ({@code
 * cuMemHostAlloc}, grown to the largest copy up to {@link #STAGE_MAX} bytes, larger copies in chunks of it): the array
 * is copied into it, then {@code cuMemcpy*Async} from it and a stream sync before it is reused. Off by default until
 * measured (the extra host copy against the driver's own staging of pageable memory); a failed {@code cuMemHostAlloc}
 * falls back to the pageable copies. Freed by {@link #close}.
 */
final class DriverSink implements OpSink, AutoCloseable {
    /** The most bytes of page-locked staging memory. */
    static final long STAGE_MAX = 64L << 20;

    private final boolean pinnedWanted = Boolean.getBoolean("attn.cuda.pinned");
    private Pointer stage; // page-locked host memory, or null
    private long stageBytes;
    private String pinnedFailure;

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

    /** The staging buffer for a copy of {@code bytes}, or null for the pageable path (off, or cuMemHostAlloc failed). */
    private Pointer stage(long bytes) {
        if (!pinnedWanted || pinnedFailure != null) return null;
        long want = Math.min(Math.max(bytes, 1L << 20), STAGE_MAX);
        if (stage != null && stageBytes >= want) return stage;
        freeStage();
        long size = Math.min(Long.highestOneBit(want - 1) << 1, STAGE_MAX);
        Pointer p = new Pointer();
        int st = JCudaDriver.cuMemHostAlloc(p, size, 0);
        if (st != jcuda.driver.CUresult.CUDA_SUCCESS) {
            pinnedFailure = "cuMemHostAlloc(" + size + " bytes): " + jcuda.driver.CUresult.stringFor(st);
            return null;
        }
        stage = p;
        stageBytes = size;
        return p;
    }

    private void freeStage() {
        if (stage != null) JCudaDriver.cuMemFreeHost(stage);
        stage = null;
        stageBytes = 0;
    }

    /** Whether the copies go through page-locked memory now; why not where it was asked for and failed. */
    String pinnedState() {
        return !pinnedWanted ? "off" : pinnedFailure != null ? "failed (" + pinnedFailure + ")" : "on";
    }

    /** Bytes of page-locked staging memory held (0 without). */
    long stageBytes() {
        return stageBytes;
    }

    @Override
    public void close() {
        freeStage();
    }

    @Override
    public void upload(float[] src, int count, CudaBuffer dst) {
        Pointer st = stage(4L * count);
        if (st != null) {
            java.nio.FloatBuffer f = st.getByteBuffer(0, stageBytes)
                    .order(java.nio.ByteOrder.nativeOrder())
                    .asFloatBuffer();
            int chunk = (int) (stageBytes / 4);
            for (int off = 0; off < count; off += chunk) {
                int n = Math.min(chunk, count - off);
                f.clear();
                f.put(src, off, n);
                check(
                        JCudaDriver.cuMemcpyHtoDAsync(dst.ptr().withByteOffset(4L * off), st, 4L * n, ctx.stream()),
                        "cuMemcpyHtoDAsync(" + 4L * n + " bytes, page-locked)");
                ctx.sync("upload of " + n + " floats"); // the staging buffer is refilled next
            }
            return;
        }
        check(
                JCudaDriver.cuMemcpyHtoDAsync(dst.ptr(), Pointer.to(src), 4L * count, ctx.stream()),
                "cuMemcpyHtoDAsync(" + 4L * count + " bytes)");
        ctx.sync("upload of " + count + " floats");
    }

    @Override
    public void upload16(short[] src, CudaBuffer dst) {
        if (src.length == 0) return;
        check(
                JCudaDriver.cuMemcpyHtoDAsync(dst.ptr(), Pointer.to(src), 2L * src.length, ctx.stream()),
                "cuMemcpyHtoDAsync(" + 2L * src.length + " bytes, 16-bit)");
        ctx.sync("upload of " + src.length + " 16-bit values");
    }

    @Override
    public void upload8(byte[] src, CudaBuffer dst) {
        if (src.length == 0) return;
        check(
                JCudaDriver.cuMemcpyHtoDAsync(dst.ptr(), Pointer.to(src), src.length, ctx.stream()),
                "cuMemcpyHtoDAsync(" + src.length + " bytes, int8)");
        ctx.sync("upload of " + src.length + " int8 values");
    }

    @Override
    public void download(CudaBuffer src, float[] dst, int count, String after) {
        Pointer st = stage(4L * count);
        if (st != null) {
            java.nio.FloatBuffer f = st.getByteBuffer(0, stageBytes)
                    .order(java.nio.ByteOrder.nativeOrder())
                    .asFloatBuffer();
            int chunk = (int) (stageBytes / 4);
            for (int off = 0; off < count; off += chunk) {
                int n = Math.min(chunk, count - off);
                check(
                        JCudaDriver.cuMemcpyDtoHAsync(st, src.ptr().withByteOffset(4L * off), 4L * n, ctx.stream()),
                        "cuMemcpyDtoHAsync(" + 4L * n + " bytes, page-locked, after " + after + ")");
                ctx.sync(after + " and download");
                f.clear();
                f.get(dst, off, n);
            }
            return;
        }
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
