package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * {@link Fa2Checks} on the host emulator ({@link EmulatedCuda}, compute capability 80): every bf16 FA2 entry on every
 * tile case of its head dim, the fp16 entries and the older kernels on a few. Skipped without g++. Tagged long
 * (minutes of emulated threads).
 */
@Tag("long")
class Fa2EmulatedTest extends Fa2Checks {
    @Override
    String unavailable() {
        return EmulatedCuda.unavailable();
    }

    @Override
    Backend open(Map<String, String> extra, Precision precision) {
        return EmulatedCuda.open(extra, precision);
    }

    @Override
    boolean everyCase(Attention.Variant v) {
        return v.precision() == Precision.BF16 && v.in16();
    }
}
