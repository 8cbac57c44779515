package io.attn.engine;

import static io.attn.engine.Fixtures.E;
import static io.attn.engine.Fixtures.input;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.tensor.Tensor;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * 10,000 small runs through one engine keep memory and threads flat. Inputs cycle through 80 sequence lengths, more
 * than the 64 executors a model caches, so both the cached path (pooled arenas) and the uncached one (an executor made
 * and closed per call) run thousands of times.
 *
 * <p>Bounds: the heap after GC at run 10,000 is at most 8 MiB above the heap after GC at run 1,000 (by then every
 * cached executor exists). 9,000 runs x 1 KiB is 8.8 MiB, so anything of a kilobyte or more kept per run fails: a kept
 * output (40 x 16 floats on average, 2.5 KiB; checked by keeping them on purpose: +24 MiB), a kept arena or executor
 * (tens of KiB). The direct (native) buffer pool grows by at most 1 MiB (the CPU backend uses none; this catches a
 * regression). The live thread count at run 10,000 equals the count at run 1,000, and after the engine is closed it
 * drops back to what it was before the engine was opened (the CPU pool's threads end).
 */
class LeakTest {
    static final int RUNS = 10_000, WARM = 1_000, LENGTHS = 80;

    @Test
    void tenThousandRunsKeepHeapNativeMemoryAndThreadsFlat() throws Exception {
        Tensor[] xs = new Tensor[LENGTHS];
        for (int l = 1; l <= LENGTHS; l++) xs[l - 1] = input(l, 1, l, E);
        int threadsBefore = liveThreads();
        long heapWarm = 0, directWarm = 0;
        int threadsWarm = 0;
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights())) {
            for (int i = 1; i <= RUNS; i++) {
                Tensor y = m.selfAttention(xs[i % LENGTHS], i % 2 == 0, AttentionWeights.NONE)
                        .output();
                if (y.dim(1) != xs[i % LENGTHS].dim(1)) throw new AssertionError("wrong output shape " + y.shape());
                if (i == WARM) {
                    heapWarm = heapAfterGc();
                    directWarm = direct();
                    threadsWarm = liveThreads();
                }
            }
            long heapEnd = heapAfterGc(), directEnd = direct();
            int threadsEnd = liveThreads();
            long growth = heapEnd - heapWarm;
            assertTrue(growth < 8L << 20, "heap grew by " + growth / 1024 + " KiB from run 1,000 to run 10,000");
            assertTrue(directEnd - directWarm < 1L << 20, "direct memory grew by " + (directEnd - directWarm) + " B");
            assertTrue(threadsEnd <= threadsWarm, "threads: " + threadsWarm + " -> " + threadsEnd);
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (liveThreads() > threadsBefore && System.nanoTime() < deadline) Thread.sleep(20);
        assertTrue(
                liveThreads() <= threadsBefore, "threads left after close: " + liveThreads() + " > " + threadsBefore);
    }

    static long heapAfterGc() throws InterruptedException {
        var mem = ManagementFactory.getMemoryMXBean();
        long min = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(20);
            min = Math.min(min, mem.getHeapMemoryUsage().getUsed());
        }
        return min;
    }

    static long direct() {
        long used = 0;
        for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
            used += b.getMemoryUsed();
        return used;
    }

    static int liveThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }
}
