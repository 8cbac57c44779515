package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.AttnException;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * A caching device-memory pool: blocks are grouped by size class and kept on free lists when released, so steady-state
 * runs never call {@code cuMemAlloc}. Size classes are 256 bytes, then four per power of two (at most 25% waste).
 *
 * <p>Reuse is safe without events because the owning backend issues all work on one stream: a block released by one
 * request and taken by the next is only touched by kernels queued after the earlier ones. When an allocation fails
 * with out-of-memory, the free lists are returned to the driver (after a stream sync) and the allocation retried
 * once. Callers hold the backend lock with the context current.
 */
final class DevicePool implements AutoCloseable {
    private final CudaContext ctx;
    private final TreeMap<Long, ArrayDeque<DevPtr>> free = new TreeMap<>();
    private final Map<DevPtr, Long> live = new IdentityHashMap<>(); // every block this pool allocated -> class bytes
    private long cachedBytes, allocatedBytes;
    private boolean closed;

    DevicePool(CudaContext ctx) {
        this.ctx = ctx;
    }

    /** The bytes actually reserved for a request of {@code bytes}. */
    static long sizeClass(long bytes) {
        if (bytes <= 256) return 256;
        int e = 63 - Long.numberOfLeadingZeros(bytes - 1); // 2^e < bytes <= 2^(e+1)
        long step = 1L << (e - 2);
        return (bytes + step - 1) / step * step;
    }

    /** A block of at least {@code bytes} bytes (its class size). */
    synchronized DevPtr take(long bytes) {
        if (closed) throw new IllegalStateException("device pool is closed");
        long cls = sizeClass(bytes);
        ArrayDeque<DevPtr> q = free.get(cls);
        if (q != null && !q.isEmpty()) {
            cachedBytes -= cls;
            return q.pop();
        }
        DevPtr p = new DevPtr();
        int st = JCudaDriver.cuMemAlloc(p, cls);
        if (st == CUresult.CUDA_ERROR_OUT_OF_MEMORY && cachedBytes > 0) {
            trim();
            st = JCudaDriver.cuMemAlloc(p, cls);
        }
        check(
                st,
                "cuMemAlloc(" + cls + " bytes for a request of " + bytes + "; pool holds " + allocatedBytes
                        + " bytes)");
        live.put(p, cls);
        allocatedBytes += cls;
        return p;
    }

    /** Puts a block back on its free list. */
    synchronized void give(DevPtr p) {
        Long cls = live.get(p);
        if (cls == null || closed) return; // not ours, or already freed by close()
        free.computeIfAbsent(cls, c -> new ArrayDeque<>()).push(p);
        cachedBytes += cls;
    }

    /** Frees every cached block (waits for the stream first: a cached block may still be in use by queued work). */
    synchronized void trim() {
        ctx.sync("freeing cached device memory");
        for (ArrayDeque<DevPtr> q : free.values())
            for (DevPtr p : q) {
                long cls = live.remove(p);
                allocatedBytes -= cls;
                check(JCudaDriver.cuMemFree(p), "cuMemFree");
            }
        free.clear();
        cachedBytes = 0;
    }

    synchronized long allocatedBytes() {
        return allocatedBytes;
    }

    synchronized long cachedBytes() {
        return cachedBytes;
    }

    /** Frees every block this pool allocated, cached or still held; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        AttnException first = null;
        for (DevPtr p : live.keySet()) {
            int st = JCudaDriver.cuMemFree(p);
            if (st != CUresult.CUDA_SUCCESS && first == null)
                first = new AttnException(AttnException.Code.INTERNAL, "cuMemFree failed: " + CUresult.stringFor(st));
        }
        live.clear();
        free.clear();
        cachedBytes = allocatedBytes = 0;
        if (first != null) throw first;
    }
}
