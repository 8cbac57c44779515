package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import io.attn.cuda.EmulatedCuda;
import io.attn.engine.Precision;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.io.Json;
import io.attn.io.Npz;
import io.attn.reference.Reference;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The ROPE, RMS_NORM and GLU ops against Hugging Face transformers itself: {@code tests/transformers-ops}, written by
 * {@code tools/ops_transformers.py} (torch 2.13 CPU, transformers 5.18) from {@code LlamaRotaryEmbedding} +
 * {@code apply_rotary_pos_emb} (full rotary), GPT-NeoX's classes (partial rotary), {@code LlamaRMSNorm}, {@code
 * torch.nn.RMSNorm} and {@code ACT2FN}'s activations on the chunked halves: transformers' float32 outputs, compared
 * with the double reference and with every backend (the emulated CUDA backend in the long pass). ROPE runs with the
 * positions as per-row ids, and where they are one range shared by the batch also as a build-time offset and as a
 * runtime start.
 *
 * <p>Bound, relative Frobenius error against transformers' float32 values: 1e-6 (measured on the CPU: at most 1e-7;
 * both sides round each float32 operation once, a few 6e-8). ROPE is held to it at positions up to 16383 too: the
 * angle is the same float32 product on both sides, so what is left is torch's float32 {@code pow}, which differs by
 * one ulp from the correctly rounded power on some inverse frequencies ({@link #inverseFrequenciesAreTransformersFloat32Ones}
 * counts them; none moved these outputs past the bound). A double-precision exponent instead of the float32 one
 * differs by up to 3 ulp where the rotary dim is not a power of two (40 and 24 here), an angle error of ~1e-3 rad
 * at position 8000.
 */
class TransformersOpsTest {
    static final Path DIR = Path.of("transformers-ops");

    record Case(String name, Graph graph, Map<String, Tensor> inputs, float[] expected, double bound) {}

    @SuppressWarnings("unchecked")
    static List<Case> cases() {
        Map<String, Object> index = (Map<String, Object>) Json.read(DIR.resolve("index.json"));
        Map<String, Tensor> a = Npz.read(DIR.resolve("ops.npz"));
        List<Case> out = new ArrayList<>();
        for (Object o : (List<Object>) index.get("cases")) {
            Map<String, Object> c = (Map<String, Object>) o;
            String name = (String) c.get("name");
            Tensor x = a.get(name + ".x"), expected = a.get(name + ".out");
            switch ((String) c.get("op")) {
                case "rope" -> {
                    float theta = ((Number) c.get("theta")).floatValue();
                    int rd = ((Number) c.get("rotary_dim")).intValue();
                    OpParams.Rope.Scaling sc = scaling(c);
                    Tensor ids = a.get(name + ".positions");
                    int b = ids.shape().dim(0), l = ids.shape().dim(1);
                    double bound = 1e-6;
                    {
                        GraphBuilder g = new GraphBuilder();
                        Node y = g.rope(g.input("x", x.shape()), g.input("ids", ids.shape()), theta, rd, 0, sc);
                        out.add(new Case(
                                name + " (ids)", g.build(y), Map.of("x", x, "ids", ids), expected.data(), bound));
                    }
                    int first = (int) ids.data()[0];
                    boolean range = true;
                    for (int i = 0; i < b * l; i++) range &= ids.data()[i] == first + i % l;
                    if (range) {
                        GraphBuilder g = new GraphBuilder();
                        Node y = g.rope(g.input("x", x.shape()), null, theta, rd, first, sc);
                        out.add(new Case(name + " (offset)", g.build(y), Map.of("x", x), expected.data(), bound));
                        GraphBuilder s = new GraphBuilder();
                        Node z = s.rope(s.input("x", x.shape()), s.input("start", 1), theta, rd, 0, sc);
                        Tensor start = Tensor.of(new float[] {first}, 1);
                        out.add(new Case(
                                name + " (start)", s.build(z), Map.of("x", x, "start", start), expected.data(), bound));
                    }
                }
                case "rms_norm" -> {
                    GraphBuilder g = new GraphBuilder();
                    Node y = g.rmsNorm(
                            g.input("x", x.shape()),
                            g.constant("weight", a.get(name + ".weight")),
                            ((Number) c.get("eps")).floatValue());
                    out.add(new Case(name, g.build(y), Map.of("x", x), expected.data(), 2e-6));
                }
                case "glu" -> {
                    var act =
                            switch ((String) c.get("act")) {
                                case "silu" -> OpParams.Glu.Activation.SILU;
                                case "gelu" -> OpParams.Glu.Activation.GELU;
                                case "gelu_pytorch_tanh" -> OpParams.Glu.Activation.GELU_TANH;
                                default -> throw new IllegalStateException("act " + c.get("act"));
                            };
                    GraphBuilder g = new GraphBuilder();
                    Node y = g.glu(g.input("x", x.shape()), act, (Boolean) c.get("activated_first"));
                    out.add(new Case(name, g.build(y), Map.of("x", x), expected.data(), 2e-6));
                }
                default -> throw new IllegalStateException("op " + c.get("op"));
            }
        }
        return out;
    }

    /** A case's rope scaling (transformers' rope_parameters: rope_type linear / llama3), or none. */
    @SuppressWarnings("unchecked")
    static OpParams.Rope.Scaling scaling(Map<String, Object> c) {
        Map<String, Object> s = (Map<String, Object>) c.get("scaling");
        if (s == null) return OpParams.Rope.Scaling.NONE;
        double factor = ((Number) s.get("factor")).doubleValue();
        return switch ((String) s.get("rope_type")) {
            case "linear" -> OpParams.Rope.Scaling.linear(factor);
            case "llama3" ->
                OpParams.Rope.Scaling.llama3(
                        factor,
                        ((Number) s.get("low_freq_factor")).doubleValue(),
                        ((Number) s.get("high_freq_factor")).doubleValue(),
                        ((Number) s.get("original_max_position_embeddings")).intValue());
            default -> throw new IllegalStateException("rope_type " + s.get("rope_type"));
        };
    }

    static double relError(double[] got, float[] expected) {
        double num = 0, den = 0;
        for (int i = 0; i < got.length; i++) {
            double d = got[i] - expected[i];
            num += d * d;
            den += (double) expected[i] * expected[i];
        }
        return Math.sqrt(num / den);
    }

    static double[] widen(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return d;
    }

    @Test
    void theFileComesFromTransformersAndCoversTheSettings() {
        Map<?, ?> index = (Map<?, ?>) Json.read(DIR.resolve("index.json"));
        assertTrue(
                String.valueOf(index.get("transformers")).startsWith("5."),
                "transformers " + index.get("transformers"));
        List<Case> cases = cases();
        assertEquals(49, cases.size());
        for (String s : List.of(
                "theta1e4",
                "theta160000",
                "theta1e6",
                "partial",
                "leftpad",
                "far",
                "llama3",
                "linear",
                "rmsnorm_llama"))
            assertTrue(cases.stream().anyMatch(c -> c.name().contains(s)), s);
    }

    /** The float32 rounding of the inverse frequencies: transformers' values, within one ulp (its pow's). */
    @Test
    void inverseFrequenciesAreTransformersFloat32Ones() {
        Map<String, Tensor> a = Npz.read(DIR.resolve("ops.npz"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> cases =
                (List<Map<String, Object>>) ((Map<String, Object>) Json.read(DIR.resolve("index.json"))).get("cases");
        int total = 0, off = 0, doubleOff = 0, doubleMaxUlps = 0, scaled = 0;
        for (Map<String, Object> c : cases) {
            if (!c.get("op").equals("rope")) continue;
            float theta = ((Number) c.get("theta")).floatValue();
            int rd = ((Number) c.get("rotary_dim")).intValue();
            var p = new OpParams.Rope(theta, rd, 0, OpParams.Rope.Positions.RANGE, scaling(c));
            float[] hf = a.get(c.get("name") + ".inv_freq").data();
            assertEquals(rd / 2, hf.length);
            if (c.get("scaling") != null) { // the scaling is seen: the unscaled frequencies are not transformers'
                var plain = new OpParams.Rope(theta, rd, 0, OpParams.Rope.Positions.RANGE);
                int moved = 0;
                for (int i = 0; i < hf.length; i++) moved += plain.invFreq(i) != hf[i] ? 1 : 0;
                assertTrue(moved >= hf.length / 4, c.get("name") + ": only " + moved + " frequencies scaled");
                scaled++;
            }
            for (int i = 0; i < hf.length; i++) {
                int ulps = Math.abs(Float.floatToIntBits(p.invFreq(i)) - Float.floatToIntBits(hf[i]));
                assertTrue(ulps <= 1, c.get("name") + " inv_freq[" + i + "] " + p.invFreq(i) + " vs " + hf[i]);
                off += ulps;
                // what a double-precision exponent gives instead
                float exact = scaling(c).apply((float) (1 / Math.pow(theta, 2.0 * i / rd)), rd);
                int du = Math.abs(Float.floatToIntBits(exact) - Float.floatToIntBits(hf[i]));
                doubleOff += du > 1 ? 1 : 0;
                doubleMaxUlps = Math.max(doubleMaxUlps, du);
                total++;
            }
        }
        assertEquals(6, scaled);
        assertTrue(off * 10 <= total, off + " of " + total + " one ulp off");
        assertTrue(
                doubleMaxUlps >= 4 && doubleOff > off, "double exponents: " + doubleOff + ", up to " + doubleMaxUlps);
    }

    @TestFactory
    Stream<DynamicTest> theReferenceAgreesWithTransformers() {
        return cases().stream()
                .map(c -> DynamicTest.dynamicTest(c.name(), () -> {
                    double err = relError(Reference.run(c.graph(), c.inputs()).get(0), c.expected());
                    assertTrue(err <= c.bound(), c.name() + ": reference vs transformers " + err + " > " + c.bound());
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyBackendAgreesWithTransformers() {
        List<DynamicTest> tests = new ArrayList<>();
        for (BackendProvider p : Backends.providers())
            tests.addAll(judge(p.name(), () -> {
                ProbeResult pr = p.probe();
                Assumptions.assumeTrue(pr.available(), () -> p.name() + " not available: " + pr.reason());
                return p.create(BackendOptions.defaults());
            }));
        return tests.stream();
    }

    @Tag("long") // the host build of the kernels
    @TestFactory
    Stream<DynamicTest> theEmulatedCudaBackendAgreesWithTransformers() {
        return judge("cuda-emulated", () -> {
                    String why = EmulatedCuda.unavailable();
                    Assumptions.assumeTrue(why == null, why);
                    return EmulatedCuda.open(Map.of(), Precision.FP32);
                })
                .stream();
    }

    private static List<DynamicTest> judge(String backend, Supplier<Backend> open) {
        List<DynamicTest> tests = new ArrayList<>();
        for (Case c : cases())
            tests.add(DynamicTest.dynamicTest(backend + ": " + c.name(), () -> {
                try (Backend b = open.get();
                        Executor ex = new Executor(b, c.graph())) {
                    Map<String, Tensor> in = new LinkedHashMap<>(c.inputs());
                    double err = relError(widen(ex.run(in).get(0).data()), c.expected());
                    System.out.printf("%-14s %-50s %.3e (bound %.1e)%n", backend, c.name(), err, c.bound());
                    assertTrue(err <= c.bound(), c.name() + " on " + backend + ": " + err + " > " + c.bound());
                }
            }));
        return tests;
    }
}
