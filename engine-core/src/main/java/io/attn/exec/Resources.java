package io.attn.exec;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.tensor.DType;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * Backend memory that several {@link Executor}s of one model share: the weights, uploaded once per array whatever the
 * number of graphs that read them (a model run on many input shapes builds one graph per shape), and the working
 * memory of runs (arenas). An arena is a list of buffers, one per {@link BufferPlan} slot; a run takes one from the
 * pool, grows the slots that are too small for its plan, and gives it back. Graphs of one model built for different
 * shapes have the same slot structure, so the pool converges to one arena per concurrent call, each slot as large as
 * the largest shape seen needs: working memory is bounded by the largest batch and the number of concurrent calls, not
 * by the number of shapes.
 *
 * <p>The weights are also shared between the models on one backend that read the same arrays (the models of several
 * tasks over one folder's weights, {@code TaskAdapters.Mode.SHARE}): an array is uploaded once per backend and
 * released when the last model holding it closes.
 *
 * <p>Thread-safe. {@link #close} releases everything; call it after the executors that use it have finished.
 */
public final class Resources implements AutoCloseable {
    private final Backend backend;
    private final Map<float[], Buffer> constants = new IdentityHashMap<>();

    // every backend's uploaded arrays, by identity, with the number of Resources holding each: the outer map guarded
    // by itself, each backend's by itself (uploads to one backend wait for each other, not for another backend's); a
    // backend's map stays while the backend lives
    private static final Map<Backend, Map<float[], Held>> UPLOADED = new java.util.WeakHashMap<>();

    private Map<float[], Held> uploaded() {
        synchronized (UPLOADED) {
            return UPLOADED.computeIfAbsent(backend, x -> new IdentityHashMap<>());
        }
    }

    private static final class Held {
        final Buffer buffer;
        int holders;

        Held(Buffer buffer) {
            this.buffer = buffer;
        }
    }

    private final ConcurrentLinkedDeque<Buffer[]> arenas = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;

    public Resources(Backend backend) {
        this.backend = backend;
    }

    public Backend backend() {
        return backend;
    }

    /**
     * The backend buffer holding {@code data}, uploaded on first use ({@link Backend#constant}: on the CPU, a view of
     * the array itself).
     */
    public synchronized Buffer constant(float[] data) {
        if (closed) throw new IllegalStateException("executor resources are closed");
        Buffer b = constants.get(data);
        if (b == null) {
            Map<float[], Held> all = uploaded();
            synchronized (all) {
                Held h = all.get(data);
                if (h == null) all.put(data, h = new Held(backend.constant(data)));
                h.holders++;
                b = h.buffer;
            }
            constants.put(data, b);
        }
        return b;
    }

    /** An arena with at least {@code sizes.length} slots, slot {@code i} holding at least {@code sizes[i]} elements. */
    Buffer[] takeArena(long[] sizes) {
        Buffer[] a = arenas.pollFirst();
        if (a == null) a = new Buffer[0];
        if (a.length < sizes.length) a = java.util.Arrays.copyOf(a, sizes.length);
        try {
            for (int i = 0; i < sizes.length; i++) {
                long need = Math.max(1, sizes[i]);
                if (a[i] != null && a[i].capacity() >= need) continue;
                if (a[i] != null) backend.release(a[i]);
                a[i] = null;
                a[i] = backend.allocate(DType.F32, need);
            }
        } catch (RuntimeException | Error e) { // out of device memory part-way: keep what the arena has
            arenas.addFirst(a);
            throw e;
        }
        return a;
    }

    void giveBack(Buffer[] arena) {
        if (closed) {
            release(arena);
            return;
        }
        arenas.addFirst(arena);
    }

    /** Elements held by pooled arenas (for tests and diagnostics). */
    public long arenaElements() {
        long n = 0;
        for (Buffer[] a : arenas) for (Buffer b : a) if (b != null) n += b.capacity();
        return n;
    }

    private void release(Buffer[] a) {
        for (Buffer b : a) if (b != null) backend.release(b);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        Buffer[] a;
        while ((a = arenas.pollFirst()) != null) release(a);
        List<Buffer> cs = new ArrayList<>();
        Map<float[], Held> all = uploaded();
        synchronized (all) {
            for (float[] d : constants.keySet()) {
                Held h = all.get(d);
                if (h != null && --h.holders > 0) continue; // another model still reads it
                if (h != null) all.remove(d);
                cs.add(constants.get(d));
            }
        }
        constants.clear();
        for (Buffer b : cs) backend.release(b);
    }
}
