package io.attn.cuda;

import io.attn.backend.Buffer;
import io.attn.tensor.DType;

/**
 * Device memory from a {@link DevicePool}. {@link #close} (or {@code Backend.release}) returns the block to the pool;
 * it is idempotent. The block stays valid until then; the pool frees it for good when the backend closes.
 */
public final class CudaBuffer implements Buffer, AutoCloseable {
    private final DevPtr ptr;
    private final DType dtype;
    private final long capacity;
    private final DevicePool pool;
    private boolean closed;

    CudaBuffer(DevPtr ptr, DType dtype, long capacity, DevicePool pool) {
        this.ptr = ptr;
        this.dtype = dtype;
        this.capacity = capacity;
        this.pool = pool;
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public long capacity() {
        return capacity;
    }

    /** The device address of the block (for the ops: in-place and alignment checks). */
    public long address() {
        return ptr().address();
    }

    DevPtr ptr() {
        if (closed) throw new IllegalStateException("CUDA buffer used after release");
        return ptr;
    }

    boolean ownedBy(DevicePool p) {
        return pool == p;
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (pool != null) pool.give(ptr); // no pool: a test buffer without device memory
    }

    @Override
    public String toString() {
        return "CudaBuffer[" + dtype + " x " + capacity + ", " + ptr + (closed ? ", released" : "") + "]";
    }
}
