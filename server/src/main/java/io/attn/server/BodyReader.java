package io.attn.server;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Reads a request body asynchronously (Jetty's read/demand loop), while the handler's thread watches it: a body over
 * {@code maxBytes} is 413 as soon as it passes the limit (Jetty's SizeLimitHandler has already refused a larger
 * Content-Length), and a body that arrives slower than {@code minRate} bytes per second (after a grace second), or
 * not by the request's deadline, is 408. Jetty's core handlers have no minimum data rate of their own (its servlet
 * layer has), so a client trickling a body would otherwise hold its admission slot until the idle timeout.
 *
 * <p>One per request; the read loop and the waiting thread share it through the future and two volatile fields.
 */
final class BodyReader implements Runnable {
    private final Request request;
    private final long maxBytes;
    private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
    private final CompletableFuture<byte[]> done = new CompletableFuture<>();
    private volatile long bytes;

    private BodyReader(Request request, long maxBytes) {
        this.request = request;
        this.maxBytes = maxBytes;
    }

    /** Request attribute set once the whole body has been read. */
    static final String READ = "attn.bodyRead";

    /**
     * Whether the request came with a body that has not been read to its end: the connection cannot carry another
     * request then (Jetty closes it), so the answer must say {@code Connection: close}.
     */
    static boolean unread(Request request) {
        boolean hasBody = request.getLength() > 0
                || request.getHeaders().contains(org.eclipse.jetty.http.HttpHeader.TRANSFER_ENCODING);
        return hasBody && request.getAttribute(READ) == null;
    }

    /** The whole body, or an {@link ApiError} (413 too large, 408 too slow or past the deadline, 400 broken). */
    static byte[] read(Request request, long maxBytes, long minRate, long deadlineNanos) {
        BodyReader r = new BodyReader(request, maxBytes);
        r.run();
        long start = System.nanoTime();
        while (true) {
            try {
                byte[] body = r.done.get(100, TimeUnit.MILLISECONDS);
                request.setAttribute(READ, Boolean.TRUE);
                return body;
            } catch (TimeoutException e) {
                long now = System.nanoTime(), elapsed = now - start;
                long due = minRate * Math.max(0, elapsed - 1_000_000_000L) / 1_000_000_000L;
                if (r.bytes < due || now - deadlineNanos > 0) {
                    r.done.completeExceptionally(e);
                    throw new ApiError(
                            408,
                            "invalid_request_error",
                            "request_timeout",
                            "the request body arrived too slowly (at least " + minRate + " bytes/s)");
                }
            } catch (ExecutionException e) {
                if (e.getCause() instanceof ApiError a) throw a;
                throw ApiError.badRequest("unreadable_body", "the request body could not be read");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiError.unavailable("shutting_down", "the server is shutting down");
            }
        }
    }

    /** Takes what has arrived; asks to be called again when more does. */
    @Override
    public void run() {
        while (!done.isDone()) {
            Content.Chunk c = request.read();
            if (c == null) {
                request.demand(this);
                return;
            }
            if (Content.Chunk.isFailure(c)) {
                boolean tooLarge =
                        c.getFailure() instanceof org.eclipse.jetty.http.HttpException h && h.getCode() == 413;
                done.completeExceptionally(tooLarge ? tooLarge(maxBytes) : c.getFailure());
                return;
            }
            ByteBuffer b = c.getByteBuffer();
            int n = b.remaining();
            if (bytes + n > maxBytes) {
                c.release();
                done.completeExceptionally(tooLarge(maxBytes));
                return;
            }
            byte[] a = new byte[n];
            b.get(a);
            buf.write(a, 0, n);
            bytes += n;
            boolean last = c.isLast();
            c.release();
            if (last) {
                done.complete(buf.toByteArray());
                return;
            }
        }
    }

    private static ApiError tooLarge(long max) {
        return ApiError.tooLarge("body_too_large", "the request body is larger than " + max + " bytes");
    }
}
