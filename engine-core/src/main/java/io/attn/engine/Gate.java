package io.attn.engine;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The close protocol of {@link Engine} and {@link AttnModel}: calls hold the read lock while they run; {@link #close}
 * takes the write lock, so it waits for the calls in flight, runs the release action exactly once, and every later
 * call (or a call that was waiting behind the close) throws {@link IllegalStateException}. A second close waits for the
 * first to finish and then does nothing. Public so that objects built on the engine (an embedder, a server's model
 * holder) give their users the same contract.
 *
 * <pre>{@code
 * gate.enter();
 * try { ... } finally { gate.exit(); }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Gate {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final String what;
    private volatile boolean closed;

    /** @param what names the object in the "is closed" message */
    public Gate(String what) {
        this.what = what;
    }

    /** Enters a call; pair with {@link #exit} in a finally block. */
    public void enter() {
        lock.readLock().lock();
        if (closed) {
            lock.readLock().unlock();
            throw new IllegalStateException(what + " is closed");
        }
    }

    public void exit() {
        lock.readLock().unlock();
    }

    public boolean isClosed() {
        return closed;
    }

    /** Waits for calls in flight, then runs {@code release} if this is the first close. */
    public void close(Runnable release) {
        if (lock.getReadHoldCount() > 0)
            throw new IllegalStateException(what + ": close() called from inside one of its own calls");
        lock.writeLock().lock();
        try {
            if (closed) return;
            closed = true;
            release.run();
        } finally {
            lock.writeLock().unlock();
        }
    }
}
