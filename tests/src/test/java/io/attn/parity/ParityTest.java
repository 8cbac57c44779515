package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import io.attn.cuda.EmulatedCuda;
import io.attn.engine.Precision;
import io.attn.graph.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The one parity suite: every op case ({@link ParityCases}) and every layer case ({@link LayerCases}) on every
 * backend configuration present, against the double-precision reference. The configurations ({@link ParityTarget}):
 * each provider on the class path, with each of its {@link BackendProvider#parityVariants() variants} (on a GPU host:
 * cuda with flash, fused and unfused attention, with cuBLAS, our GEMM kernel and JCublas); and, tagged long, the CUDA
 * backend under host emulation ({@link EmulatedCuda}) with each attention path (fp32 flash attention on the 3xTF32
 * kernels by default), in bf16, and in fp16 and with {@code flash.fp32=simt} (fp32 bounds) on the attention cases. The CPU backend runs at
 * the JVM's vector width; CI runs this class again with {@code -XX:UseAVX=2} for the 256-bit paths.
 *
 * <p>A configuration that is unavailable (no GPU, no g++, JCublas not loading) is reported as SKIPPED (aborted) with
 * the reason, never as passed; a node its backend declares unsupported likewise, except on the CPU backend, which
 * must run every op.
 */
class ParityTest {
    private static final Map<String, Backend> OPEN = new ConcurrentHashMap<>();

    @AfterAll
    static void closeBackends() {
        OPEN.values().forEach(Backend::close);
        OPEN.clear();
    }

    @TestFactory
    Stream<DynamicNode> everyCaseOnEveryBackend() {
        List<BackendProvider> providers = Backends.providers();
        assertTrue(!providers.isEmpty(), "no BackendProvider registered (META-INF/services)");
        List<DynamicNode> out = new ArrayList<>();
        for (BackendProvider p : providers) {
            ProbeResult probe = probe(p);
            String why = probe.available() ? null : p.name() + " unavailable: " + probe.reason();
            for (ParityTarget t : ParityTarget.of(p, 0, Precision.FP32)) out.add(judge(t, why));
        }
        return out.stream();
    }

    @Tag("long") // minutes: the host build of the kernels, then emulated tile and tensor-core loops
    @TestFactory
    Stream<DynamicNode> everyCaseOnTheEmulatedCudaBackend() {
        String why = EmulatedCuda.unavailable();
        List<DynamicNode> out = new ArrayList<>();
        for (Map<String, String> v : EmulatedCuda.variants())
            out.add(judge(
                    new ParityTarget(
                            ParityTarget.name("cuda-emulated", Precision.FP32, v),
                            Precision.FP32,
                            !v.isEmpty(),
                            () -> EmulatedCuda.open(v, Precision.FP32)),
                    why));
        // the default runs fp32 flash attention on tf32 tensor cores (3xTF32); the SIMT kernel (flash.fp32=simt, and
        // the default below sm_80): the attention cases, held to the same fp32 bounds
        out.add(judge(
                new ParityTarget(
                        ParityTarget.name("cuda-emulated", Precision.FP32, EmulatedCuda.SIMT),
                        Precision.FP32,
                        true,
                        () -> EmulatedCuda.open(EmulatedCuda.SIMT, Precision.FP32)),
                why,
                c -> c.op() == Op.ATTENTION));
        // the 16-bit tensor-core flash kernels: bf16 on every case; fp16 differs from it in those kernels only (the
        // emulator's GEMM is fp32 at either), so on the attention cases
        for (Precision p : List.of(Precision.BF16, Precision.FP16))
            out.add(judge(
                    new ParityTarget(
                            ParityTarget.name("cuda-emulated", p, Map.of()),
                            p,
                            false,
                            () -> EmulatedCuda.open(Map.of(), p)),
                    why,
                    p == Precision.BF16 ? c -> true : c -> c.op() == Op.ATTENTION));
        return out.stream();
    }

    /** One container per target: its op cases, then its layer cases; aborted with {@code unavailable} when set. */
    private static DynamicNode judge(ParityTarget t, String unavailable) {
        return judge(t, unavailable, c -> true);
    }

    /** The same for the op cases {@code which} selects, and the layer cases only when it selects every op case. */
    private static DynamicNode judge(ParityTarget t, String unavailable, Predicate<ParityCase> selected) {
        List<ParityCase> all = ParityCases.all();
        // -Dattn.parity.filter=REGEX: only the op cases whose name it finds (^(rope|glu) ...), and then no layer cases
        java.util.regex.Pattern filter = java.util.regex.Pattern.compile(System.getProperty("attn.parity.filter", ""));
        Predicate<ParityCase> which = selected.and(c -> filter.matcher(c.name()).find());
        boolean everything = all.stream().allMatch(which);
        Stream<DynamicNode> ops = t.opCases(all).stream()
                .filter(which)
                .map(c -> dynamicTest(c.name(), () -> {
                    Backend b = open(t, unavailable);
                    // every op of the case's graph, not only its output: a chain (QMATMUL + epilogue) ends in an op
                    // that every backend has
                    for (io.attn.graph.Node n : c.graph().nodes())
                        if (!n.isLeaf() && !b.supports(n)) {
                            if (ParityHarness.mustSupportEverything(b))
                                org.junit.jupiter.api.Assertions.fail(t.name() + " does not support " + n);
                            Assumptions.abort(t.name() + " does not support " + n);
                        }
                    ParityResult r = ParityHarness.run(c, b);
                    assertTrue(
                            r.pass(),
                            () -> c.name() + " on " + t.name() + ": " + r.message() + "\n"
                                    + ParityReport.format(List.of(r)));
                }));
        Stream<DynamicNode> layers = (everything ? LayerCases.cases() : List.<LayerCases.Case>of())
                .stream()
                        .map(c -> dynamicTest(c.name(), () -> {
                            Backend b = open(t, unavailable);
                            String why = LayerCases.unsupported(c, b);
                            if (why != null) {
                                if (ParityHarness.mustSupportEverything(b))
                                    org.junit.jupiter.api.Assertions.fail(t.name() + ": " + why);
                                Assumptions.abort(t.name() + ": " + why);
                            }
                            LayerCases.Result r = LayerCases.run(c, b, t.layerBound());
                            assertTrue(r.pass(), () -> c.name() + " on " + t.name() + ": " + r.message());
                        }));
        return dynamicContainer(t.name(), Stream.of(dynamicContainer("ops", ops), dynamicContainer("layers", layers)));
    }

    private static Backend open(ParityTarget t, String unavailable) {
        if (unavailable != null) Assumptions.abort(unavailable);
        try {
            return OPEN.computeIfAbsent(t.name(), n -> t.open());
        } catch (AttnException e) { // a variant whose path does not exist on this host (JCublas not loading)
            Assumptions.abort(t.name() + " cannot start: " + e.getMessage());
            throw e;
        }
    }

    private static ProbeResult probe(BackendProvider p) {
        try {
            return p.probe();
        } catch (Throwable t) { // a probe must not throw; if it does, report it as the reason
            return ProbeResult.unavailable(p.name(), "probe threw " + t);
        }
    }
}
