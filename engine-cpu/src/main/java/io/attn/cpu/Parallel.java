package io.attn.cpu;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * A fixed thread pool and a dynamic parallel-for. The calling thread takes part in the work; helpers claim task
 * indices from a shared counter, so a helper that starts late finds nothing left and costs nothing, and the caller
 * waits only for tasks that were actually claimed. Kernels never call {@link #forEach} from inside a task (no nesting),
 * so pool threads never block and many callers can share the pool.
 */
public final class Parallel implements AutoCloseable {
    private final int threads;
    private final ExecutorService pool;

    public Parallel(int threads) {
        this.threads = Math.max(1, threads);
        AtomicInteger n = new AtomicInteger();
        this.pool = this.threads == 1
                ? null
                : Executors.newFixedThreadPool(this.threads - 1, r -> {
                    Thread t = new Thread(r, "attn-cpu-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    public int threads() {
        return threads;
    }

    /**
     * Runs {@code body} for every index in {@code [0, tasks)}, on up to {@link #threads()} threads. The split into
     * tasks is the caller's, so results never depend on the thread count.
     */
    public void forEach(int tasks, IntConsumer body) {
        if (tasks <= 0) return;
        if (tasks == 1 || pool == null) {
            for (int i = 0; i < tasks; i++) body.accept(i);
            return;
        }
        AtomicInteger next = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(tasks);
        AtomicReference<Throwable> error = new AtomicReference<>();
        Runnable worker = () -> {
            for (int i; (i = next.getAndIncrement()) < tasks; ) {
                try {
                    if (error.get() == null) body.accept(i);
                } catch (Throwable t) {
                    error.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            }
        };
        int helpers = Math.min(threads, tasks) - 1;
        for (int h = 0; h < helpers; h++) {
            try {
                pool.execute(worker);
            } catch (RejectedExecutionException e) {
                break; // closing: the caller does the rest
            }
        }
        worker.run();
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for CPU kernel tasks", e);
        }
        Throwable t = error.get();
        if (t instanceof RuntimeException re) throw re;
        if (t instanceof Error er) throw er;
        if (t != null) throw new IllegalStateException(t);
    }

    /**
     * Splits {@code [0, n)} into chunks of at least {@code grain} items (fixed by {@code n} and {@code grain} only) and
     * runs {@code body.run(from, to)} on each.
     */
    public void forRange(int n, int grain, RangeBody body) {
        if (n <= 0) return;
        int chunks = Math.max(1, Math.min(n / Math.max(1, grain), 16 * threads));
        if (chunks == 1 || pool == null) {
            body.run(0, n);
            return;
        }
        forEach(chunks, c -> body.run((int) ((long) n * c / chunks), (int) ((long) n * (c + 1) / chunks)));
    }

    /** The body of {@link #forRange}. */
    @FunctionalInterface
    public interface RangeBody {
        void run(int from, int to);
    }

    @Override
    public void close() {
        if (pool != null) pool.shutdown();
    }
}
