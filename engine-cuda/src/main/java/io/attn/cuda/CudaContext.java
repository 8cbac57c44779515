package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.JCudaDriver;

/**
 * The device's primary context (retained here, released on close) and one stream for the backend instance that owns
 * this object. Threads that call the driver must make the context current first ({@link #makeCurrent}); the backend
 * does so on every entry.
 */
final class CudaContext implements AutoCloseable {
    final DeviceInfo info;
    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final RawStream stream = new RawStream();
    private boolean retained, streamCreated, closed;

    CudaContext(DeviceInfo info) {
        this.info = info;
        try {
            check(JCudaDriver.cuDeviceGet(device, info.ordinal()), "cuDeviceGet(" + info.ordinal() + ")");
            check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
            retained = true;
            makeCurrent();
            check(JCudaDriver.cuStreamCreate(stream, 0), "cuStreamCreate");
            streamCreated = true;
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Makes the primary context current on the calling thread (cheap; call before any driver call). */
    void makeCurrent() {
        check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    RawStream stream() {
        return stream;
    }

    /** Waits for everything queued on the stream; {@code after} names the last queued work for error messages. */
    void sync(String after) {
        check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize (after " + after + ")");
    }

    /** Destroys the stream and releases the primary context; idempotent. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (streamCreated) {
            JCudaDriver.cuCtxSetCurrent(context);
            JCudaDriver.cuStreamSynchronize(stream);
            JCudaDriver.cuStreamDestroy(stream);
        }
        if (retained) JCudaDriver.cuDevicePrimaryCtxRelease(device);
    }
}
