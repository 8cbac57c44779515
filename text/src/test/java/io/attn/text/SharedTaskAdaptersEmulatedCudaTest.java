package io.attn.text;

import io.attn.cuda.EmulatedCuda;
import io.attn.engine.TaskAdapters;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * {@link SharedTaskAdaptersTest} on the CUDA backend's op logic and {@code .cu} kernels compiled for the host ({@link
 * EmulatedCuda}, fp32): each task's adapter run beside the shared weights, held to the same judges and bounds. Tagged
 * {@code long} (the host build of the kernels): CI's second test run takes it.
 */
@Tag("long")
class SharedTaskAdaptersEmulatedCudaTest extends SharedTaskAdaptersTest {
    @BeforeAll
    static void open() {
        engine = EmulatedEngines.openOrSkip();
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    /**
     * On the device too the tasks share one copy: the second task's model adds its adapter's bytes to the weights the
     * engine holds (within {@value #CARRIED} bytes: the engine's count also holds the small arrays a call carries in its
     * ops' parameters until they are collected, 192 bytes in this run), and the weights stay until the last model
     * holding them closes.
     */
    static final int CARRIED = 1024;

    private static void assertNear(long want, long got, String what) {
        org.junit.jupiter.api.Assertions.assertTrue(
                Math.abs(got - want) <= CARRIED, what + ": " + got + " bytes, expected " + want);
    }

    @org.junit.jupiter.api.Test
    void theTasksHoldOneCopyOfTheWeightsOnTheDevice() {
        List<String> tasks = List.of("retrieval.query", "retrieval.passage");
        List<TextModel> read = TextModel.read(HUB, null, tasks, TaskAdapters.Mode.SHARE);
        long before = engine.weightBytes();
        Embedder q = Embedder.load(engine, read.get(0), task(tasks.get(0)));
        q.embed(List.of("hello"));
        long one = engine.weightBytes() - before;
        long adapter = 0;
        for (var e : read.get(1).weights().entrySet())
            if (e.getKey().endsWith(".lora_A") || e.getKey().endsWith(".lora_B"))
                adapter += 4L * e.getValue().size();
        try (Embedder p = Embedder.load(engine, read.get(1), task(tasks.get(1)))) {
            p.embed(List.of("hello"));
            long two = engine.weightBytes() - before;
            System.out.printf(
                    "jina-v3-hub on the device: one task %d bytes, two tasks %d (adapter %d)%n", one, two, adapter);
            assertNear(one + adapter, two, "the second task adds its adapter only");
            q.close();
            assertNear(two - adapter, engine.weightBytes() - before, "the shared weights stay while p holds them");
        }
        assertNear(0, engine.weightBytes() - before, "all released with the last model");
    }
}
