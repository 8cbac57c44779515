package io.attn.cuda;

import java.util.concurrent.locks.ReentrantLock;
import jcuda.driver.CUstream;

/**
 * A JCuda stream handle that also gives its raw {@code CUstream} value (for cuBLAS bound through FFM), and owns the
 * lock that orders work on it. A thread holds {@link #lock} while it queues work on the stream or touches what only
 * that work uses (the kernel functions of {@link KernelModule}, the GEMM handle, the embedding error word): {@link
 * CudaBackend} takes it once per public call, which may queue several kernels, and nothing below it locks per op or
 * per launch.
 */
final class RawStream extends CUstream {
    private final ReentrantLock lock = new ReentrantLock();

    RawStream() {}

    long address() {
        return getNativePointer();
    }

    /** The stream's lock (reentrant). */
    ReentrantLock lock() {
        return lock;
    }

    /** Fails unless the calling thread holds {@link #lock}: for the parts that rely on the caller's locking. */
    void checkLocked(String what) {
        if (!lock.isHeldByCurrentThread()) throw new IllegalStateException(what + " without the stream lock held");
    }
}
