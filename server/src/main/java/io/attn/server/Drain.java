package io.attn.server;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Request;

/**
 * What a graceful stop must finish: the requests the server received before it began. A request counts as received
 * before the drain when Jetty began parsing it before, or when it is the first request since the drain on a connection
 * the server had accepted before (its bytes may have been waiting in the socket while the cores ran a batch: Jetty
 * parses a request only when a thread gets to it, so the time it began parsing says nothing of when it arrived).
 * Anything else, a new connection or a further request on an old one, is refused with 503; every answer while draining
 * closes its connection. The drain is over when no request has been in the handler for a quiet spell (with nothing
 * running, bytes waiting in a socket are parsed within that spell), or at the drain timeout.
 *
 * <p>Thread-safe; a bean on the connector, so that it hears of every connection.
 */
final class Drain implements Connection.Listener {
    /** How long the handler must stay empty before the drain is over. */
    static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final ConcurrentHashMap<Connection, Long> opened = new ConcurrentHashMap<>();
    private final Set<Connection> servedSince = ConcurrentHashMap.newKeySet();
    private final AtomicInteger inHandler = new AtomicInteger();
    private volatile long since;
    private volatile boolean draining;

    @Override
    public void onOpened(Connection c) {
        opened.put(c, System.nanoTime());
    }

    @Override
    public void onClosed(Connection c) {
        opened.remove(c);
        servedSince.remove(c);
    }

    /** Connections open now. */
    int connections() {
        return opened.size();
    }

    /** The drain begins now. */
    void start() {
        since = System.nanoTime();
        draining = true;
    }

    boolean draining() {
        return draining;
    }

    /** Whether {@code request} must still be answered from the model (see the class comment); call once per request. */
    boolean receivedBefore(Request request) {
        if (!draining) return true;
        if (request.getBeginNanoTime() - since < 0) return true;
        Connection c = request.getConnectionMetaData().getConnection();
        Long t = c == null ? null : opened.get(c);
        return t != null && t - since < 0 && servedSince.add(c);
    }

    void enter() {
        inHandler.incrementAndGet();
    }

    void exit() {
        inHandler.decrementAndGet();
    }

    /**
     * Waits until the handler has been empty for {@link #QUIET_NANOS}, or until {@code untilNanos}.
     *
     * @return whether it went quiet in time
     */
    boolean awaitQuiet(long untilNanos) throws InterruptedException {
        long quietSince = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            if (inHandler.get() > 0) quietSince = now;
            else if (now - quietSince >= QUIET_NANOS) return true;
            if (now - untilNanos >= 0) return false;
            Thread.sleep(5);
        }
    }
}
