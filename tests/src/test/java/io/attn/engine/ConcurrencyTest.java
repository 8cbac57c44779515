package io.attn.engine;

import static io.attn.engine.Fixtures.E;
import static io.attn.engine.Fixtures.bitwiseEqual;
import static io.attn.engine.Fixtures.input;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * One engine, two loaded models, 8 threads x 1,000 mixed requests (encoder layer batched, unbatched and with key
 * padding; MHA causal self-attention with averaged weights; MHA cross-attention with per-head weights; a request with a
 * wrong width): every answer is bitwise equal to the answer of the same request made alone, on one thread, before any
 * concurrency and before the JIT compiled anything (so it also checks that interpreted and compiled kernels agree),
 * and every bad request fails with SHAPE_MISMATCH without disturbing the others.
 */
class ConcurrencyTest {
    static final int THREADS = 8, REQUESTS = 1_000;

    /** A request kind: what it does, and the outputs to compare (output then attention weights). */
    record Case(String name, Function<Models, List<Tensor>> call) {}

    record Models(AttnModel encoder, AttnModel mha) {}

    static List<Case> cases() {
        Tensor x = input(21, 2, 7, E), one = input(22, 5, E), q = input(23, 3, 4, E), mem = input(24, 3, 9, E);
        Tensor pad = Tensor.of(new float[] {0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}, 2, 7);
        Tensor bad = input(25, 2, 7, E - 1);
        Tensor longX = input(26, 1, 300, E); // >= 128 keys, no mask: the fused attention's full-tile fast path
        List<Case> cs = new ArrayList<>();
        cs.add(new Case("encode", m -> List.of(m.encoder().encode(x))));
        cs.add(new Case("encode unbatched", m -> List.of(m.encoder().encode(one))));
        cs.add(new Case("encode padded", m -> List.of(m.encoder().encode(x, pad))));
        cs.add(new Case("encode long", m -> List.of(m.encoder().encode(longX))));
        cs.add(new Case("self causal", m -> outs(m.mha().selfAttention(x, true, AttentionWeights.AVERAGED))));
        cs.add(new Case("cross", m -> outs(m.mha().crossAttention(q, mem, AttentionWeights.PER_HEAD))));
        cs.add(new Case(
                "general",
                m -> outs(m.encoder()
                        .run(Request.of(q).withCausal(true).withAttentionWeights(AttentionWeights.AVERAGED)))));
        cs.add(new Case("bad shape", m -> List.of(m.encoder().encode(bad))));
        return cs;
    }

    static List<Tensor> outs(Result r) {
        List<Tensor> l = new ArrayList<>();
        l.add(r.output());
        l.addAll(r.attentionWeights().values());
        return l;
    }

    @Test
    void concurrentCallsGiveTheSequentialResultsBitwise() throws Exception {
        List<Case> cases = cases();
        try (Engine engine = Fixtures.cpu()) {
            Models models = new Models(
                    engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights()),
                    engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights()));
            List<List<Tensor>> expected = new ArrayList<>();
            for (Case c : cases)
                expected.add(c.name().equals("bad shape") ? null : c.call().apply(models));

            AtomicInteger ok = new AtomicInteger(), rejected = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = t;
                fs.add(pool.submit(() -> {
                    start.await();
                    SplittableRandom rnd = new SplittableRandom(seed);
                    for (int i = 0; i < REQUESTS; i++) {
                        int k = rnd.nextInt(cases.size());
                        Case c = cases.get(k);
                        try {
                            List<Tensor> got = c.call().apply(models);
                            if (expected.get(k) == null) failures.add(c.name() + ": no error");
                            else if (!same(expected.get(k), got)) failures.add(c.name() + ": differs");
                            else ok.incrementAndGet();
                        } catch (AttnException e) {
                            if (expected.get(k) == null && e.code() == AttnException.Code.SHAPE_MISMATCH)
                                rejected.incrementAndGet();
                            else failures.add(c.name() + ": " + e.code() + " " + e.getMessage());
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : fs) f.get(120, TimeUnit.SECONDS);
            pool.shutdown();
            assertTrue(failures.isEmpty(), () -> failures.size() + " failures, first: " + failures.peek());
            assertEquals(THREADS * REQUESTS, ok.get() + rejected.get());
            assertTrue(rejected.get() > 0 && ok.get() > 0);
        }
    }

    static boolean same(List<Tensor> want, List<Tensor> got) {
        if (want.size() != got.size()) return false;
        for (int i = 0; i < want.size(); i++)
            if (!want.get(i).shape().equals(got.get(i).shape())
                    || !bitwiseEqual(want.get(i).data(), got.get(i).data())) return false;
        return true;
    }

    /**
     * Closing while 8 threads call the model: every call either completes normally or is refused with
     * IllegalStateException at entry; none sees released buffers (that would surface as an INTERNAL error or a wrong
     * answer). Close returns only when no call is running: a call that completed did so with a correct result.
     */
    @Test
    void closeWaitsForCallsInFlight() throws Exception {
        Tensor x = input(31, 4, 16, E);
        Engine engine = Fixtures.cpu();
        AttnModel m = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights());
        float[] want = m.encode(x).data();
        AtomicInteger ok = new AtomicInteger(), refused = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> bad = new ConcurrentLinkedQueue<>();
        CountDownLatch running = new CountDownLatch(THREADS);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Thread th = new Thread(() -> {
                running.countDown();
                while (true) {
                    try {
                        if (bitwiseEqual(want, m.encode(x).data())) ok.incrementAndGet();
                        else bad.add(new AssertionError("wrong result"));
                    } catch (IllegalStateException e) {
                        refused.incrementAndGet();
                        return;
                    } catch (Throwable e) {
                        bad.add(e);
                        return;
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        running.await();
        Thread.sleep(50);
        engine.close(); // closes the model: waits for the calls in flight
        engine.close();
        for (Thread th : ts) th.join(10_000);
        assertTrue(bad.isEmpty(), () -> "failure: " + bad.peek());
        assertEquals(THREADS, refused.get());
        assertTrue(ok.get() > 0);
        assertTrue(m.isClosed());
    }
}
