package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.attn.backend.Backend;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import io.attn.graph.Op;
import io.attn.parity.ParityCase;
import io.attn.parity.ParityCases;
import io.attn.parity.ParityHarness;
import io.attn.parity.ParityResult;
import io.attn.parity.ParityTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * Every 16-bit flash entry ({@link Attention#VARIANTS}, chosen by option {@code flash.variant}) on the emulated CUDA
 * backend against the double reference, on the parity suite's attention tile cases of its head dim (every mask kind,
 * causal with L < S and L > S, two query tiles of 128, L and S off the tile sizes, B * H > 1, fully masked rows) at
 * their 16-bit bounds ({@code ParityCases.TILES_16_BIT}: 2e-2 bf16, 4e-3 fp16). The bf16 entries run every tile case;
 * under emulation an fp16 entry differs from its bf16 twin only in the mma type and the conversion, so it runs three
 * there (causal over two query tiles, a 4-D bool mask with padding, an additive one). The parity suite (tests module, ParityTest) runs the
 * defaults at both precisions on every case. {@link Fa2EmulatedTest} runs it on the host emulator (tagged long:
 * minutes of emulated threads), {@link Fa2GpuTest} on a GPU (every entry on every case; skipped without one).
 */
abstract class Fa2Checks {
    private static final Map<String, Backend> OPEN = new ConcurrentHashMap<>();

    @AfterAll
    static void close() {
        OPEN.values().forEach(Backend::close);
        OPEN.clear();
    }

    /** Null when the backend can run, else why not (the tests are then skipped). */
    abstract String unavailable();

    /** A backend at {@code precision} with the options {@code extra}. */
    abstract Backend open(Map<String, String> extra, Precision precision);

    /** Whether every tile case runs for variant {@code v} (else the three named above). */
    abstract boolean everyCase(Attention.Variant v);

    @TestFactory
    Stream<DynamicNode> everyVariantOnTheTileCasesOfItsHeadDim() {
        String why = unavailable();
        List<DynamicNode> out = new ArrayList<>();
        for (Attention.Variant v : Attention.VARIANTS) {
            String entry = v.kernel().entry();
            ParityTarget t = new ParityTarget(
                    getClass().getSimpleName() + " " + entry,
                    v.precision(),
                    true,
                    () -> open(Map.of(Attention.VARIANT_OPTION, entry), v.precision()));
            boolean all = everyCase(v);
            List<ParityCase> cases = t.opCases(ParityCases.all()).stream()
                    .filter(c -> c.op() == Op.ATTENTION
                            && c.name().startsWith("attention tiles")
                            && c.name().endsWith(" D" + v.d()))
                    .filter(c -> all
                            || c.name().contains("causal 2 query tiles")
                            || (v.in16() && c.name().contains("bool(B,H,L,S)"))
                            || (v.in16() && c.name().contains("additive(B,1,L,S)")))
                    .toList();
            assertTrue(!cases.isEmpty(), entry + ": no tile cases of head dim " + v.d());
            out.add(dynamicContainer(
                    entry,
                    cases.stream()
                            .map(c -> dynamicTest(c.name(), () -> {
                                if (why != null) Assumptions.abort(why);
                                Backend b;
                                try {
                                    b = OPEN.computeIfAbsent(t.name(), n -> t.open());
                                } catch (io.attn.AttnException e) { // a GPU older than 8.0 refuses bf16 / fp16
                                    if (e.code() != io.attn.AttnException.Code.DEVICE_UNAVAILABLE) throw e;
                                    Assumptions.abort(t.name() + " cannot start: " + e.getMessage());
                                    return;
                                }
                                ParityResult r = ParityHarness.run(c, b);
                                assertTrue(r.pass(), () -> c.name() + " on " + entry + ": " + r.message());
                            }))));
        }
        return out.stream();
    }
}
