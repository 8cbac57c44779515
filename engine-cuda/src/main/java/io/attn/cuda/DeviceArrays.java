package io.attn.cuda;

import io.attn.tensor.DType;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Device copies of the host arrays that ops carry in their parameters rather than as graph constants: the int8
 * weights, scales and zero points of {@code QMATMUL} and the int8 tables of {@code QEMBEDDING} (issue 37). Each array
 * is uploaded on first use and kept while the array is reachable (keyed by identity, held weakly: a model closed and
 * collected gives its device memory back at the next upload or lookup, and {@link #close} gives back the rest). The
 * int8 data stays int8 on the device: a weight takes a quarter of its float32 size there too. Called with the stream's
 * lock held, as every op.
 */
final class DeviceArrays implements AutoCloseable {
    private final OpSink sink;
    private final ReferenceQueue<Object> collected = new ReferenceQueue<>();
    private final Map<Integer, List<Held>> byHash = new HashMap<>(); // identity hash -> the arrays with it
    private long bytes;

    private static final class Held extends WeakReference<Object> {
        final int hash;
        final CudaBuffer buffer;
        final long bytes;

        Held(Object array, ReferenceQueue<Object> q, CudaBuffer buffer, long bytes) {
            super(array, q);
            this.hash = System.identityHashCode(array);
            this.buffer = buffer;
            this.bytes = bytes;
        }
    }

    DeviceArrays(OpSink sink) {
        this.sink = sink;
    }

    /** The device copy of int8 data (an {@link DType#I8} buffer), uploaded on first use. */
    synchronized CudaBuffer int8(byte[] data) {
        CudaBuffer b = find(data);
        if (b != null) return b;
        b = sink.allocate(DType.I8, data.length);
        sink.upload8(data, b);
        return keep(data, b, data.length);
    }

    /** The device copy of float data, uploaded on first use. */
    synchronized CudaBuffer f32(float[] data) {
        CudaBuffer b = find(data);
        if (b != null) return b;
        b = sink.allocate(DType.F32, data.length);
        sink.upload(data, data.length, b);
        return keep(data, b, 4L * data.length);
    }

    /** Bytes held on the device for arrays still reachable (or not yet seen collected). */
    synchronized long bytes() {
        expunge();
        return bytes;
    }

    private CudaBuffer find(Object array) {
        expunge();
        List<Held> l = byHash.get(System.identityHashCode(array));
        if (l != null) for (Held h : l) if (h.get() == array) return h.buffer;
        return null;
    }

    private CudaBuffer keep(Object array, CudaBuffer b, long n) {
        Held h = new Held(array, collected, b, n);
        byHash.computeIfAbsent(h.hash, k -> new ArrayList<>(1)).add(h);
        bytes += n;
        return b;
    }

    /** Gives back the device copies of arrays that have been collected. */
    private void expunge() {
        for (Object r; (r = collected.poll()) != null; ) {
            Held h = (Held) r;
            List<Held> l = byHash.get(h.hash);
            if (l == null || !l.remove(h)) continue;
            if (l.isEmpty()) byHash.remove(h.hash);
            bytes -= h.bytes;
            h.buffer.close();
        }
    }

    @Override
    public synchronized void close() {
        for (List<Held> l : byHash.values()) for (Held h : l) h.buffer.close();
        byHash.clear();
        bytes = 0;
    }
}
