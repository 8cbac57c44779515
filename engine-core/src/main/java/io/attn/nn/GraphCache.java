package io.attn.nn;

import io.attn.backend.Backend;
import io.attn.exec.Executor;
import io.attn.exec.Resources;
import io.attn.graph.Graph;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A model's built graphs, one per (backend, {@link Signature}), and its resources per backend. At most {@value
 * #MAX_CACHED} graphs are kept, the least recently used going first. All graphs on one backend share its {@link
 * Resources}: the weights are uploaded once and the working memory is pooled across shapes, so a model called with
 * many shapes (token batches of every length) holds one copy of its weights and working memory for its largest batch
 * per concurrent call.
 *
 * <p>Thread-safe. Executors hold nothing of their own, so an evicted one needs no closing and may finish the calls that
 * still use it. {@link #close} releases every backend's resources; any use after it throws {@link
 * IllegalStateException}.
 */
final class GraphCache implements AutoCloseable {
    static final int MAX_CACHED = 64;

    /** A graph ready to run, and the block names of its attention-weight outputs (outputs 1..n). */
    record Compiled(Executor executor, List<String> weightNames) {}

    /** A graph as built from a signature: its outputs are the model output, then the weights of {@code weightNames}. */
    record Built(Graph graph, List<String> weightNames) {}

    private record Key(Backend backend, Signature signature) {}

    private final Map<Key, Compiled> compiled = new LinkedHashMap<>(16, 0.75f, true); // access order: LRU
    private final Map<Backend, Resources> resources = new IdentityHashMap<>();
    private volatile boolean closed;

    /**
     * The executor for {@code signature} on {@code backend}: from the cache, or built by {@code build} (outside the
     * lock) and cached.
     */
    Compiled get(Backend backend, Signature signature, Function<Signature, Built> build) {
        Key key = new Key(backend, signature);
        synchronized (compiled) {
            if (closed) throw new IllegalStateException("model is closed");
            Compiled c = compiled.get(key);
            if (c != null) return c;
        }
        Built b = build.apply(signature);
        Compiled c = new Compiled(new Executor(b.graph(), resources(backend)), List.copyOf(b.weightNames()));
        synchronized (compiled) {
            Compiled prev = compiled.putIfAbsent(key, c);
            if (prev != null) return prev;
            if (compiled.size() > MAX_CACHED) {
                var it = compiled.entrySet().iterator();
                it.next();
                it.remove();
            }
            return c;
        }
    }

    private Resources resources(Backend backend) {
        synchronized (resources) {
            if (closed) throw new IllegalStateException("model is closed");
            return resources.computeIfAbsent(backend, Resources::new);
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        synchronized (compiled) {
            closed = true;
            compiled.clear();
        }
        synchronized (resources) {
            for (Resources r : resources.values()) r.close();
            resources.clear();
        }
    }
}
