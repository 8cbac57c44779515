package io.attn.text;

import io.attn.cuda.EmulatedCuda;
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
}
