package io.attn.cpu;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * A fixed set of helper threads and a dynamic parallel-for. The calling thread takes part in the work; helpers claim
 * task indices from a shared counter, so a helper that starts late finds nothing left and costs nothing, and the caller
 * waits only for tasks that were actually claimed. Kernels never call {@link #forEach} from inside a task (no nesting),
 * so helpers never block on each other and many callers can share the pool (each call is a job in a queue; helpers
 * work on the oldest).
 *
 * <p><b>Waiting.</b> An idle helper, and a caller whose last tasks run on helpers, spin for up to {@link #spinMicros()}
 * microseconds before they sleep (0: sleep at once). A forward pass is a chain of short parallel ops, and waking a
 * sleeping thread is a system call that, in a VM, can cost about what a whole op of a one-sentence encoder pass does:
 * a wall-clock profile of one-text MiniLM passes on 2 threads (docs/performance.md, "Waiting threads") put 8% of the
 * caller's time in {@code unpark} alone when helpers slept at once. The spin is bounded, so an idle engine sleeps
 * within that time; while it spins it takes a core that other busy threads on the same cores could have used, hence
 * the option (ONNX Runtime's intra-op pool and OpenMP runtimes spin the same way).
 */
public final class Parallel implements AutoCloseable {
    /** The default spin before sleeping, microseconds. */
    public static final int DEFAULT_SPIN_US = 1000;
    /** The largest spin one may ask for (10 ms): longer only burns a core. */
    public static final int MAX_SPIN_US = 10_000;

    private final int threads;
    private final long spinNs;
    private final Helper[] helpers;
    private final ConcurrentLinkedQueue<Job> jobs = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** {@code threads} threads (the caller and {@code threads - 1} helpers), spinning {@link #DEFAULT_SPIN_US}. */
    public Parallel(int threads) {
        this(threads, DEFAULT_SPIN_US);
    }

    /** {@code threads} threads, waiting threads spinning {@code spinMicros} (0 to {@link #MAX_SPIN_US}) first. */
    public Parallel(int threads, int spinMicros) {
        if (spinMicros < 0 || spinMicros > MAX_SPIN_US)
            throw new IllegalArgumentException("spin " + spinMicros + " us: expected 0 to " + MAX_SPIN_US);
        this.threads = Math.max(1, threads);
        this.spinNs = spinMicros * 1000L;
        this.helpers = new Helper[this.threads - 1];
        for (int i = 0; i < helpers.length; i++) {
            helpers[i] = new Helper("attn-cpu-" + (i + 1));
            helpers[i].start();
        }
    }

    public int threads() {
        return threads;
    }

    /** How long a waiting thread spins before it sleeps, microseconds. */
    public int spinMicros() {
        return (int) (spinNs / 1000);
    }

    /**
     * Runs {@code body} for every index in {@code [0, tasks)}, on up to {@link #threads()} threads. The split into
     * tasks is the caller's, so results never depend on the thread count.
     */
    public void forEach(int tasks, IntConsumer body) {
        if (tasks <= 0) return;
        if (tasks == 1 || helpers.length == 0 || closed) {
            for (int i = 0; i < tasks; i++) body.accept(i);
            return;
        }
        Job job = new Job(tasks, body, Thread.currentThread());
        jobs.offer(job);
        int wake = Math.min(threads, tasks) - 1;
        for (int h = 0; h < helpers.length && wake > 0; h++) {
            if (helpers[h].sleeping) { // a spinning helper finds the job by itself
                LockSupport.unpark(helpers[h]);
                wake--;
            }
        }
        job.work();
        jobs.remove(job);
        job.await(spinNs);
        Throwable t = job.error.get();
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
        if (chunks == 1 || helpers.length == 0) {
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

    /** Stops the helpers (each once its current task is done); later calls run on the caller alone. */
    @Override
    public void close() {
        closed = true;
        for (Helper h : helpers) LockSupport.unpark(h);
    }

    /** One {@link #forEach} call: its tasks, the next unclaimed index and the count of finished tasks. */
    private static final class Job {
        final int tasks;
        final IntConsumer body;
        final Thread owner;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger finished = new AtomicInteger();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        volatile boolean ownerSleeping;

        Job(int tasks, IntConsumer body, Thread owner) {
            this.tasks = tasks;
            this.body = body;
            this.owner = owner;
        }

        boolean exhausted() {
            return next.get() >= tasks;
        }

        /** Claims and runs tasks until none is left; after the first error the rest are claimed and skipped. */
        void work() {
            for (int i; (i = next.getAndIncrement()) < tasks; ) {
                try {
                    if (error.get() == null) body.accept(i);
                } catch (Throwable t) {
                    error.compareAndSet(null, t);
                } finally {
                    // owner writes ownerSleeping then reads finished; we write finished then read ownerSleeping:
                    // one of the two sees the other, so the owner is never left asleep
                    if (finished.incrementAndGet() == tasks && ownerSleeping) LockSupport.unpark(owner);
                }
            }
        }

        /**
         * The owner waits for the tasks that helpers claimed: spins up to {@code spinNs}, then sleeps. It does not give up on an interrupt
         * (the helpers are still writing the op's output); the interrupt status is kept for the caller to see.
         */
        void await(long spinNs) {
            if (finished.get() == tasks) return;
            long until = System.nanoTime() + spinNs;
            while (finished.get() != tasks && System.nanoTime() - until < 0) Thread.onSpinWait();
            if (finished.get() == tasks) return;
            boolean interrupted = false;
            ownerSleeping = true;
            while (finished.get() != tasks) {
                LockSupport.park(this);
                if (Thread.interrupted()) interrupted = true; // park returns at once while the status is set
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** A helper thread: works on the oldest job, spins when there is none, then sleeps until a call wakes it. */
    private final class Helper extends Thread {
        volatile boolean sleeping;

        Helper(String name) {
            super(name);
            setDaemon(true);
        }

        @Override
        public void run() {
            long idleSince = 0;
            boolean idle = false;
            while (!closed) {
                Job job = jobs.peek();
                if (job != null) {
                    if (job.exhausted()) jobs.remove(job);
                    else job.work();
                    idle = false;
                    continue;
                }
                long now = System.nanoTime();
                if (!idle) {
                    idle = true;
                    idleSince = now;
                }
                if (now - idleSince < spinNs) {
                    Thread.onSpinWait();
                    continue;
                }
                // we write sleeping then read the queue; a caller writes the queue then reads sleeping
                sleeping = true;
                if (jobs.isEmpty() && !closed) LockSupport.park(this);
                sleeping = false;
                // nothing interrupts helpers on purpose; a stray interrupt must not leave park returning at once
                Thread.interrupted();
                idle = false;
            }
        }
    }
}
