package io.attn.server;

import io.attn.AttnException;
import io.attn.text.Embedder;
import io.attn.text.Embeddings;
import io.attn.text.TokenizedTexts;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;

/**
 * Dynamic batching: requests' tokenized texts are queued, and one worker thread runs them through the embedder in
 * batches. A batch starts with the oldest request, takes whatever else is queued, and waits up to {@code maxWait} for
 * more while it holds fewer than {@code maxBatchTokens} tokens; so under load 64 clients sending one sentence each are
 * served by a few large forward passes, and a lone request waits at most {@code maxWait}. Requests whose deadline has
 * passed, or whose caller gave up, are dropped before they run. Each request's vectors are bitwise what it would get
 * alone (the embedder's guarantee). A forward pass that fails (out of memory, a device fault) fails that batch's
 * requests only.
 *
 * <p>Thread-safe: {@link #submit} from any thread.
 */
final class Batcher<R> implements AutoCloseable {
    /** One request's texts and the future its handler waits on. */
    record Item<R>(TokenizedTexts texts, long deadlineNanos, CompletableFuture<R> result) {}

    /** The model's work: a batch of tokenized texts (or pairs) in, its result out, and one request's part of it. */
    interface Runner<R> {
        R run(TokenizedTexts all);

        R slice(R all, int from, int to);
    }

    /** An embedder's vectors. */
    static Runner<Embeddings> embeddings(Embedder embedder) {
        return new Runner<>() {
            @Override
            public Embeddings run(TokenizedTexts all) {
                return embedder.embed(all);
            }

            @Override
            public Embeddings slice(Embeddings e, int from, int to) {
                return new Embeddings(
                        Arrays.copyOfRange(e.vectors(), from, to),
                        Arrays.copyOfRange(e.tokens(), from, to),
                        Arrays.copyOfRange(e.truncated(), from, to));
            }
        };
    }

    /** A sequence classifier's logits ({@code [sequences][labels]}). */
    static Runner<float[][]> logits(java.util.function.Function<TokenizedTexts, float[][]> f) {
        return new Runner<>() {
            @Override
            public float[][] run(TokenizedTexts all) {
                return f.apply(all);
            }

            @Override
            public float[][] slice(float[][] all, int from, int to) {
                return Arrays.copyOfRange(all, from, to);
            }
        };
    }

    private final Runner<R> runner;
    private final String model;
    private final int maxBatchTokens;
    private final long maxWaitNanos;
    private final Metrics metrics;
    private final LinkedBlockingDeque<Item<R>> queue = new LinkedBlockingDeque<>();
    private final Thread worker;
    private volatile boolean closed;

    Batcher(Runner<R> runner, String model, int maxBatchTokens, long maxWaitMillis, Metrics metrics) {
        this.runner = runner;
        this.model = model;
        this.maxBatchTokens = maxBatchTokens;
        this.maxWaitNanos = TimeUnit.MILLISECONDS.toNanos(maxWaitMillis);
        this.metrics = metrics;
        this.worker = Thread.ofPlatform().name("attn-batcher-" + model).daemon().start(this::loop);
    }

    /** Queues the texts; the future completes with their vectors, or with an {@link ApiError}. */
    CompletableFuture<R> submit(TokenizedTexts texts, long deadlineNanos) {
        CompletableFuture<R> f = new CompletableFuture<>();
        if (closed) f.completeExceptionally(ApiError.unavailable("shutting_down", "the server is shutting down"));
        else queue.add(new Item<>(texts, deadlineNanos, f));
        return f;
    }

    private void loop() {
        try {
            while (!closed) {
                List<Item<R>> batch = next();
                if (!batch.isEmpty()) run(batch);
            }
        } catch (InterruptedException e) {
            // closing
        }
        for (Item<R> i; (i = queue.poll()) != null; )
            i.result().completeExceptionally(ApiError.unavailable("shutting_down", "the server is shutting down"));
    }

    /** The next batch: the oldest live request, then others until the token budget or the wait runs out. */
    private List<Item<R>> next() throws InterruptedException {
        Item<R> first = live(queue.take());
        if (first == null) return List.of();
        List<Item<R>> batch = new ArrayList<>(List.of(first));
        long tokens = first.texts().totalTokens();
        long until = System.nanoTime() + maxWaitNanos;
        while (tokens < maxBatchTokens) {
            long left = until - System.nanoTime();
            Item<R> next = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : queue.poll();
            if (next == null) break;
            if (live(next) == null) continue;
            if (tokens + next.texts().totalTokens() > maxBatchTokens) {
                queue.addFirst(next); // the next batch starts with it
                break;
            }
            batch.add(next);
            tokens += next.texts().totalTokens();
        }
        return batch;
    }

    /** The item, or null when its caller gave up or its deadline passed (it is answered 503 then). */
    private static <R> Item<R> live(Item<R> i) {
        if (i.result().isDone()) return null;
        if (System.nanoTime() - i.deadlineNanos() > 0) {
            i.result().completeExceptionally(ApiError.unavailable("timeout", "the request waited past its deadline"));
            return null;
        }
        return i;
    }

    private void run(List<Item<R>> batch) {
        List<TokenizedTexts> parts = new ArrayList<>(batch.size());
        for (Item<R> i : batch) parts.add(i.texts());
        TokenizedTexts all = TokenizedTexts.concat(parts);
        long start = System.nanoTime();
        R e;
        try {
            e = runner.run(all);
        } catch (OutOfMemoryError oom) {
            fail(batch, ApiError.unavailable("out_of_memory", "out of memory running this batch; retry later"));
            return;
        } catch (AttnException ex) {
            boolean device = ex.code() == AttnException.Code.DEVICE_OUT_OF_MEMORY
                    || ex.code() == AttnException.Code.DEVICE_UNAVAILABLE;
            fail(
                    batch,
                    device
                            ? ApiError.unavailable(
                                    "device_error", "the device failed running this batch: " + ex.getMessage())
                            : new ApiError(500, "server_error", "internal_error", "internal error running this batch"));
            return;
        } catch (RuntimeException ex) {
            fail(batch, new ApiError(500, "server_error", "internal_error", "internal error running this batch"));
            return;
        }
        metrics.batchSeconds.labelValues(model).observe((System.nanoTime() - start) / 1e9);
        metrics.batchTexts.labelValues(model).observe(all.size());
        metrics.batchTokens.labelValues(model).observe(all.totalTokens());
        metrics.texts.labelValues(model).inc(all.size());
        metrics.tokens.labelValues(model).inc(all.totalTokens());
        int at = 0;
        for (Item<R> i : batch) {
            int n = i.texts().size();
            i.result().complete(runner.slice(e, at, at + n));
            at += n;
        }
    }

    private static <R> void fail(List<Item<R>> batch, ApiError error) {
        for (Item<R> i : batch) i.result().completeExceptionally(error);
    }

    /** Stops taking work; what is queued is answered 503. */
    @Override
    public void close() {
        closed = true;
        worker.interrupt();
        try {
            worker.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
