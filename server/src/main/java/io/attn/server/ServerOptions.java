package io.attn.server;

import java.util.List;
import java.util.function.Consumer;

/**
 * How {@code attn serve} runs: where it listens, who may call it, its batching, and the limits that keep it up under
 * hostile or heavy load. Every limit has a default that lets ordinary requests through (16 inputs of 128 tokens,
 * OpenAI clients' defaults) and refuses absurd ones (100,000 inputs).
 *
 * @param host the address to bind; 127.0.0.1 unless asked
 * @param port 0 picks a free port
 * @param apiKey a bearer token every call but {@code /health} must carry; null: none
 * @param corsOrigin an origin allowed by CORS ({@code *} for any); null: no CORS headers
 * @param maxBatchTokens tokens per forward pass (a batch of several requests' texts)
 * @param maxWaitMillis how long the first request of a batch waits for others to join it
 * @param maxQueuedRequests requests admitted at once (queued or running); more get 429 with Retry-After
 * @param maxInputs texts per request
 * @param maxRequestTokens tokens per request, all its texts together
 * @param maxBodyBytes request body size, checked against Content-Length before reading and while reading
 * @param maxHeaderBytes request header size
 * @param idleTimeoutMillis a connection idle this long is closed
 * @param minDataRate bytes per second a client must keep sending its body at (after the first second), else 408
 * @param requestTimeoutMillis a request not answered by then (queued behind a long batch) gets 503
 * @param drainTimeoutMillis on SIGTERM, how long requests in flight may finish
 * @param warmupMillis before the port opens, how long each model runs warm-up batches of assorted shapes (0: one short
 *     pass), so that the JIT has compiled the kernels for the shapes traffic brings before traffic comes
 * <p>Immutable.
 */
public record ServerOptions(
        String host,
        int port,
        String apiKey,
        String corsOrigin,
        int maxBatchTokens,
        int maxWaitMillis,
        int maxQueuedRequests,
        int maxInputs,
        int maxRequestTokens,
        long maxBodyBytes,
        int maxHeaderBytes,
        long idleTimeoutMillis,
        long minDataRate,
        long requestTimeoutMillis,
        long drainTimeoutMillis,
        long warmupMillis) {
    public ServerOptions {
        if (host == null || host.isBlank()) throw new IllegalArgumentException("host is required");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be 0-65535, got " + port);
        if (apiKey != null && apiKey.isBlank()) apiKey = null;
        for (var e : List.of(
                new long[] {maxBatchTokens, 1},
                new long[] {maxWaitMillis, 0},
                new long[] {maxQueuedRequests, 1},
                new long[] {maxInputs, 1},
                new long[] {maxRequestTokens, 1},
                new long[] {maxBodyBytes, 1},
                new long[] {maxHeaderBytes, 1024},
                new long[] {idleTimeoutMillis, 1},
                new long[] {minDataRate, 0},
                new long[] {requestTimeoutMillis, 1},
                new long[] {drainTimeoutMillis, 0},
                new long[] {warmupMillis, 0}))
            if (e[0] < e[1]) throw new IllegalArgumentException("a limit is below its minimum " + e[1] + ": " + e[0]);
    }

    /** 127.0.0.1:8080, no key, no CORS; batches of 4096 tokens formed within 5 ms; the limits below. */
    public static ServerOptions defaults() {
        return new ServerOptions(
                "127.0.0.1",
                8080,
                null,
                null,
                4096,
                5,
                256,
                2048,
                262_144,
                16L << 20,
                16 << 10,
                30_000,
                1024,
                30_000,
                30_000,
                0);
    }

    /** A copy whose models run warm-up batches of assorted shapes for {@code millis} before the port opens. */
    public ServerOptions withWarmup(long millis) {
        return with(b -> b.warmupMillis = millis);
    }

    public ServerOptions withHost(String h) {
        return with(b -> b.host = h);
    }

    public ServerOptions withPort(int p) {
        return with(b -> b.port = p);
    }

    public ServerOptions withApiKey(String k) {
        return with(b -> b.apiKey = k);
    }

    public ServerOptions withCorsOrigin(String o) {
        return with(b -> b.corsOrigin = o);
    }

    /** Batching: tokens per forward pass and the wait for a batch to fill ({@code tokens} 1: no batching). */
    public ServerOptions withBatching(int tokens, int waitMillis) {
        return with(b -> {
            b.maxBatchTokens = tokens;
            b.maxWaitMillis = waitMillis;
        });
    }

    /** Per-request limits: texts, tokens, body bytes. */
    public ServerOptions withRequestLimits(int inputs, int tokens, long bodyBytes) {
        return with(b -> {
            b.maxInputs = inputs;
            b.maxRequestTokens = tokens;
            b.maxBodyBytes = bodyBytes;
        });
    }

    /** Requests admitted at once (queued or running). */
    public ServerOptions withMaxQueuedRequests(int n) {
        return with(b -> b.maxQueuedRequests = n);
    }

    /** Connection and request timeouts: idle, minimum body data rate, a request's deadline, the drain on shutdown. */
    public ServerOptions withTimeouts(long idleMillis, long minDataRate, long requestMillis, long drainMillis) {
        return with(b -> {
            b.idleTimeoutMillis = idleMillis;
            b.minDataRate = minDataRate;
            b.requestTimeoutMillis = requestMillis;
            b.drainTimeoutMillis = drainMillis;
        });
    }

    /** A copy with {@code change} applied to these values (checked again by the constructor). */
    private ServerOptions with(Consumer<Copy> change) {
        Copy b = new Copy(this);
        change.accept(b);
        return b.build();
    }

    /** The record's values, to change a few of them. */
    private static final class Copy {
        String host, apiKey, corsOrigin;
        int port, maxBatchTokens, maxWaitMillis, maxQueuedRequests, maxInputs, maxRequestTokens, maxHeaderBytes;
        long maxBodyBytes, idleTimeoutMillis, minDataRate, requestTimeoutMillis, drainTimeoutMillis, warmupMillis;

        Copy(ServerOptions o) {
            host = o.host;
            port = o.port;
            apiKey = o.apiKey;
            corsOrigin = o.corsOrigin;
            maxBatchTokens = o.maxBatchTokens;
            maxWaitMillis = o.maxWaitMillis;
            maxQueuedRequests = o.maxQueuedRequests;
            maxInputs = o.maxInputs;
            maxRequestTokens = o.maxRequestTokens;
            maxBodyBytes = o.maxBodyBytes;
            maxHeaderBytes = o.maxHeaderBytes;
            idleTimeoutMillis = o.idleTimeoutMillis;
            minDataRate = o.minDataRate;
            requestTimeoutMillis = o.requestTimeoutMillis;
            drainTimeoutMillis = o.drainTimeoutMillis;
            warmupMillis = o.warmupMillis;
        }

        ServerOptions build() {
            return new ServerOptions(
                    host,
                    port,
                    apiKey,
                    corsOrigin,
                    maxBatchTokens,
                    maxWaitMillis,
                    maxQueuedRequests,
                    maxInputs,
                    maxRequestTokens,
                    maxBodyBytes,
                    maxHeaderBytes,
                    idleTimeoutMillis,
                    minDataRate,
                    requestTimeoutMillis,
                    drainTimeoutMillis,
                    warmupMillis);
        }
    }
}
