package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * {@link Fa2Checks} on the host emulator ({@link EmulatedCuda}, compute capability 80): every 16-bit entry on three
 * tile cases of its head dim (the default entries run every case in ParityTest; the 2026-11-27 GPU sweep judged every
 * entry on the device); with {@code -Dattn.test.allVariantCases=true} the bf16 FA2 entries on every tile case (about
 * 15 minutes on 2 cores). Skipped without g++. Tagged long (minutes of emulated threads).
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
        return Boolean.getBoolean("attn.test.allVariantCases") && v.precision() == Precision.BF16 && v.in16();
    }
}
