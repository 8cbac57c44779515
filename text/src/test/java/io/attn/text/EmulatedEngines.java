package io.attn.text;

import io.attn.cuda.EmulatedCuda;
import io.attn.engine.Engine;
import io.attn.engine.Precision;
import io.attn.engine.internal.Engines;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/** The engine of the text suites' emulated CUDA variants: the CUDA backend on its host-compiled kernels, fp32. */
final class EmulatedEngines {
    private EmulatedEngines() {}

    /** An engine on {@link EmulatedCuda}, or the test skipped with the reason the emulator is unavailable. */
    static Engine openOrSkip() {
        String why = EmulatedCuda.unavailable();
        Assumptions.assumeTrue(why == null, why);
        return Engines.of(EmulatedCuda.open(Map.of(), Precision.FP32));
    }
}
