package io.attn.nn;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.tensor.DType;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The key/value cache of incremental decoding: for each layer a key and a value buffer of {@code (B, H, C, D)} floats,
 * allocated on the backend that computes and kept there across calls (graphs write into them with {@code
 * CACHE_WRITE}; nothing is copied to the host). Zeroed when allocated, so rows not yet written hold finite values
 * (a backend may still read masked rows into the attention's weighted sum with weight 0, and 0 * NaN would be NaN;
 * the CPU backend reads none past the last row in use).
 *
 * <p>Not thread-safe: one decoding session at a time uses a cache.
 */
public final class KvCache implements AutoCloseable {
    private final Backend backend;
    private final int batch, heads, capacity, headDim;
    private final Map<String, Buffer> buffers = new LinkedHashMap<>();
    private boolean closed;

    public KvCache(Backend backend, int layers, int batch, int heads, int capacity, int headDim) {
        this.backend = backend;
        this.batch = batch;
        this.heads = heads;
        this.capacity = capacity;
        this.headDim = headDim;
        long n = (long) batch * heads * capacity * headDim;
        if (n <= 0 || n > Integer.MAX_VALUE - 16)
            throw new IllegalArgumentException(
                    "bad cache size " + batch + "x" + heads + "x" + capacity + "x" + headDim);
        float[] zeros = new float[(int) n];
        try {
            for (int i = 0; i < layers; i++)
                for (String name : new String[] {DecoderOnlyLM.kCacheName(i), DecoderOnlyLM.vCacheName(i)}) {
                    Buffer b = backend.allocate(DType.F32, n);
                    buffers.put(name, b);
                    backend.upload(zeros, zeros.length, b);
                }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The buffers by graph input name, for {@code Executor.run(inputs, bound)}. */
    public Map<String, Buffer> bindings() {
        if (closed) throw new IllegalStateException("KV cache is closed");
        return buffers;
    }

    public int batch() {
        return batch;
    }

    public int heads() {
        return heads;
    }

    /** Rows per sequence (C). */
    public int capacity() {
        return capacity;
    }

    public int headDim() {
        return headDim;
    }

    /** Device elements held, over all layers. */
    public long elements() {
        return (long) buffers.size() * batch * heads * capacity * headDim;
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (Buffer b : buffers.values()) backend.release(b);
    }
}
