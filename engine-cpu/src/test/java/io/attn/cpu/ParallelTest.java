package io.attn.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The thread pool under the kernels: every task once, errors, interrupts, many callers, no lost wake-up, close. A
 * lost wake-up hangs a call, so every test has a time limit, enforced from another thread (a stuck call ignores
 * interrupts).
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ParallelTest {

    @Test
    void everyTaskRunsExactlyOnceForAnyThreadsTasksAndSpin() {
        for (int spin : new int[] {0, 1000})
            for (int threads = 1; threads <= 4; threads++)
                try (Parallel par = new Parallel(threads, spin)) {
                    for (int tasks = 0; tasks <= 40; tasks++) {
                        AtomicIntegerArray runs = new AtomicIntegerArray(Math.max(1, tasks));
                        par.forEach(tasks, runs::incrementAndGet);
                        for (int i = 0; i < tasks; i++)
                            assertEquals(1, runs.get(i), "threads " + threads + " spin " + spin + " task " + i);
                    }
                    int[] covered = new int[1000];
                    par.forRange(1000, 7, (from, to) -> {
                        for (int i = from; i < to; i++) covered[i]++;
                    });
                    for (int i = 0; i < 1000; i++) assertEquals(1, covered[i], "forRange index " + i);
                }
    }

    @Test
    void helpersTakePartAndTheCallerWaitsForTheirTasks() throws Exception {
        try (Parallel par = new Parallel(2, 0)) {
            par.forEach(2, t -> {});
            Thread.sleep(100); // the helper sleeps now (spin 0): the next call must wake it
            // two tasks that each wait for the other: only two threads running at once can finish them
            CountDownLatch both = new CountDownLatch(2);
            AtomicIntegerArray done = new AtomicIntegerArray(2);
            assertTimeoutPreemptively(
                    Duration.ofSeconds(20),
                    () -> par.forEach(2, t -> {
                        both.countDown();
                        try {
                            assertTrue(
                                    both.await(10, java.util.concurrent.TimeUnit.SECONDS), "the other task never ran");
                            Thread.sleep(20); // the caller must wait for the helper's task, not return after its own
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        done.set(t, 1);
                    }));
            assertEquals(1, done.get(0));
            assertEquals(1, done.get(1));
        }
    }

    @Test
    void noLostWakeUpWhenThreadsSleepAtOnce() {
        // spin 0: every wait ends in park, so a missed unpark would hang one of these calls
        try (Parallel par = new Parallel(3, 0)) {
            long[] sum = new long[1];
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                for (int call = 0; call < 20_000; call++) {
                    AtomicIntegerArray runs = new AtomicIntegerArray(3);
                    par.forEach(3, runs::incrementAndGet);
                    sum[0] += runs.get(0) + runs.get(1) + runs.get(2);
                }
            });
            assertEquals(60_000, sum[0]);
        }
    }

    @Test
    void manyCallersShareOnePool() throws Exception {
        try (Parallel par = new Parallel(3, 200)) {
            int callers = 6;
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int c = 0; c < callers; c++) {
                Thread t = new Thread(() -> {
                    try {
                        for (int call = 0; call < 500; call++) {
                            int tasks = 1 + call % 9;
                            AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
                            par.forEach(tasks, runs::incrementAndGet);
                            for (int i = 0; i < tasks; i++)
                                if (runs.get(i) != 1) throw new AssertionError("task " + i + " ran " + runs.get(i));
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) t.join(60_000);
            for (Thread t : threads) assertTrue(!t.isAlive(), "a caller is stuck");
            if (failure.get() != null) throw new AssertionError(failure.get());
        }
    }

    @Test
    void aTaskErrorReachesTheCallerAndThePoolGoesOn() {
        try (Parallel par = new Parallel(2, 100)) {
            IllegalStateException boom = new IllegalStateException("boom");
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> par.forEach(16, t -> {
                        if (t == 5) throw boom;
                    }));
            assertSame(boom, thrown);
            AtomicIntegerArray runs = new AtomicIntegerArray(16);
            par.forEach(16, runs::incrementAndGet);
            for (int i = 0; i < 16; i++) assertEquals(1, runs.get(i));
        }
    }

    @Test
    void anInterruptedCallerStillWaitsForEveryTaskAndKeepsItsInterrupt() {
        try (Parallel par = new Parallel(2, 0)) {
            AtomicIntegerArray done = new AtomicIntegerArray(2);
            java.util.concurrent.atomic.AtomicBoolean helperStarted = new java.util.concurrent.atomic.AtomicBoolean();
            Thread caller = Thread.currentThread();
            par.forEach(2, t -> {
                if (Thread.currentThread() == caller) { // its task waits (without an interruptible call) for the helper
                    while (!helperStarted.get()) Thread.onSpinWait();
                } else { // the helper's task: interrupts the caller, then runs on while the caller waits
                    helperStarted.set(true);
                    caller.interrupt();
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                done.set(t, 1);
            });
            assertTrue(Thread.interrupted(), "the interrupt was swallowed"); // also clears it for the next tests
            assertEquals(1, done.get(0));
            assertEquals(1, done.get(1), "the caller returned before the helper's task was done");
        }
    }

    @Test
    void idleHelpersSleepAfterTheSpinAndCloseStopsThem() throws Exception {
        java.util.Set<Thread> before = helperThreads();
        Parallel par = new Parallel(3, 1000);
        List<Thread> ours =
                helperThreads().stream().filter(t -> !before.contains(t)).toList();
        assertEquals(2, ours.size(), "a pool of 3 threads has 2 helpers");
        par.forEach(8, t -> {});
        Thread.sleep(200); // 200 times the spin
        for (Thread h : ours)
            assertEquals(Thread.State.WAITING, h.getState(), h.getName() + " still spinning after its spin time");
        par.close();
        for (Thread h : ours) {
            h.join(10_000);
            assertTrue(!h.isAlive(), h.getName() + " still running after close");
        }
        AtomicIntegerArray runs = new AtomicIntegerArray(8);
        par.forEach(8, runs::incrementAndGet); // after close: on the caller alone
        for (int i = 0; i < 8; i++) assertEquals(1, runs.get(i));
    }

    private static java.util.Set<Thread> helperThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("attn-cpu-"))
                .collect(java.util.stream.Collectors.toSet());
    }

    @Test
    void theSpinOptionIsCheckedAndNamed() throws Exception {
        assertEquals(Parallel.DEFAULT_SPIN_US, CpuBackend.spinMicros(null, null));
        assertEquals(250, CpuBackend.spinMicros(null, "250"));
        assertEquals(0, CpuBackend.spinMicros("0", "250")); // the backend option wins over the property
        AttnException e = assertThrows(AttnException.class, () -> CpuBackend.spinMicros("fast", null));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains("spin-us=fast"), e.getMessage());
        e = assertThrows(AttnException.class, () -> CpuBackend.spinMicros(null, "-1"));
        assertTrue(e.getMessage().contains("-Dattn.cpu.spin-us=-1"), e.getMessage());
        assertThrows(AttnException.class, () -> CpuBackend.spinMicros("10001", null));
        assertThrows(IllegalArgumentException.class, () -> new Parallel(2, -1));
        try (CpuBackend b = new CpuBackend(new io.attn.backend.BackendOptions(
                2, io.attn.engine.Precision.FP32, java.util.Map.of(CpuBackend.SPIN_OPTION, "0")))) {
            assertTrue(b.description().contains("spin 0 us"), b.description());
        }
    }
}
