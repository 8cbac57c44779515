package io.attn.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Generation;
import io.attn.engine.GenerationOptions;
import io.attn.engine.LanguageModel;
import io.attn.io.Json;
import io.attn.nn.DecoderOnlyConfig;
import io.attn.nn.DecoderOnlyLM;
import io.attn.nn.DecoderSession;
import io.attn.nn.StateDict;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefDecoderOnlyLM;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Decoder-only generation on every backend against the double-precision {@link RefDecoderOnlyLM} (full recomputation
 * of each unpadded sequence): at every step the logits from the KV cache equal the logits recomputed without it, and
 * both equal the reference; greedy decoding of a batch of prompts of different lengths matches the reference token for
 * token. Every backend is compared with the same reference, so backends that pass agree with each other.
 *
 * <p>Bound: relative error {@code ||got - want||_2 / ||want||_2 <= 1e-5} per sequence and step, as the issue asks and
 * as the layer tests use: float32 rounding (~6e-8 per op) accumulated over two layers of width 16 and feed-forward
 * width 32 stays near 1e-6. A wrong cache row, position or mask changes the logits by O(1e-1).
 */
class DecoderOnlyTest {
    static final int V = 23, E = 16, H = 4, F = 32, LAYERS = 2, MAX_LEN = 24;
    static final double BOUND = 1e-5;
    static final int[][] PROMPTS = {{3, 9, 1, 14, 7}, {5}, {20, 2, 11}};

    /** One model variant: the reference's config, and the flags of the LM around the layers. */
    record Variant(String name, LayerConfig layer, boolean learned, boolean tied, boolean finalNorm, boolean bias) {
        Map<String, Tensor> weights(long seed) {
            return RandomStateDicts.decoderOnlyLM(layer, V, LAYERS, MAX_LEN, learned, tied, finalNorm, bias, seed);
        }

        DecoderOnlyLM engine(Map<String, Tensor> sd) {
            var c = new DecoderOnlyConfig(
                    V,
                    new io.attn.nn.LayerConfig(
                            E, H, F, layer.activation(), (float) layer.layerNormEps(), layer.normFirst(), true),
                    LAYERS,
                    MAX_LEN,
                    learned,
                    tied,
                    finalNorm);
            return DecoderOnlyLM.load(c, new StateDict(sd));
        }

        RefDecoderOnlyLM reference(Map<String, Tensor> sd) {
            return new RefDecoderOnlyLM(sd, layer, LAYERS, learned, tied, finalNorm);
        }
    }

    static final List<Variant> VARIANTS = List.of(
            new Variant("post-norm relu sinusoidal untied", LayerConfig.of(E, H, F), false, false, false, true),
            new Variant(
                    "pre-norm gelu learned tied final-norm",
                    LayerConfig.of(E, H, F).withActivation("gelu").withNormFirst(true),
                    true,
                    true,
                    true,
                    false));

    interface Body {
        void run(Backend b, Variant v) throws Exception;
    }

    static Stream<DynamicTest> everywhere(String name, Body body) {
        return perBackend(name, (p, v) -> {
            try (Backend b = p.create(BackendOptions.defaults())) {
                body.run(b, v);
            }
        });
    }

    interface ProviderBody {
        void run(BackendProvider p, Variant v) throws Exception;
    }

    /** One test per available backend and variant (an unavailable backend's tests are skipped, with its reason). */
    static Stream<DynamicTest> perBackend(String name, ProviderBody body) {
        List<DynamicTest> out = new ArrayList<>();
        for (BackendProvider p : Backends.providers())
            for (Variant v : VARIANTS)
                out.add(DynamicTest.dynamicTest(p.name() + " " + v.name() + ": " + name, () -> {
                    var probe = p.probe();
                    Assumptions.assumeTrue(probe.available(), () -> p.name() + " unavailable: " + probe.reason());
                    body.run(p, v);
                }));
        return out.stream();
    }

    static double relErr(float[] got, double[] want) {
        double d = 0, n = 0;
        for (int i = 0; i < want.length; i++) {
            d += (got[i] - want[i]) * (got[i] - want[i]);
            n += want[i] * want[i];
        }
        return Math.sqrt(d / n);
    }

    static double relErr(float[] got, float[] want) {
        double[] w = new double[want.length];
        for (int i = 0; i < w.length; i++) w[i] = want[i];
        return relErr(got, w);
    }

    @TestFactory
    Stream<DynamicTest> cachedLogitsEqualRecomputedAtEveryStep() {
        return everywhere("cached == recomputed == reference", (b, v) -> {
            Map<String, Tensor> sd = v.weights(11);
            DecoderOnlyLM lm = v.engine(sd);
            RefDecoderOnlyLM ref = v.reference(sd);
            int steps = 7, cap = 5 + steps;
            int[][] seqs = Arrays.stream(PROMPTS).map(int[]::clone).toArray(int[][]::new);
            try (DecoderSession cached = new DecoderSession(lm, b, PROMPTS.length, cap);
                    DecoderSession fresh = new DecoderSession(lm, b, PROMPTS.length, cap)) {
                float[][] logits = cached.prefill(PROMPTS);
                for (int step = 0; ; step++) {
                    float[][] recomputed = fresh.prefill(seqs);
                    for (int s = 0; s < seqs.length; s++) {
                        String at = "step " + step + " sequence " + s;
                        double eCache = relErr(logits[s], recomputed[s]);
                        double eRef = relErr(logits[s], ref.nextLogits(seqs[s]));
                        assertTrue(eCache <= BOUND, at + ": cached vs recomputed relative error " + eCache);
                        assertTrue(eRef <= BOUND, at + ": cached vs reference relative error " + eRef);
                    }
                    if (step == steps) break;
                    int[] next = new int[seqs.length];
                    for (int s = 0; s < seqs.length; s++) {
                        next[s] = (step * 7 + s * 5 + 3) % V; // fixed tokens: the same input on both paths
                        seqs[s] = Arrays.copyOf(seqs[s], seqs[s].length + 1);
                        seqs[s][seqs[s].length - 1] = next[s];
                    }
                    logits = cached.step(next);
                }
                assertEquals(5 + steps, cached.length());
            }
        });
    }

    /**
     * Generation through the public API ({@link LanguageModel#generate}) on each backend's engine: the variant's model
     * loaded from its config (as {@code arguments()} gives it) and weights.
     */
    interface LmBody {
        void run(LanguageModel lm, Variant v, Map<String, Tensor> sd) throws Exception;
    }

    static Stream<DynamicTest> generating(String name, long seed, LmBody body) {
        return perBackend(name, (p, v) -> {
            Map<String, Tensor> sd = v.weights(seed);
            String config = Json.write(v.engine(sd).config().arguments());
            try (Engine engine = Engine.open(EngineOptions.defaults().withDevice(p.name()));
                    LanguageModel lm = engine.loadLanguageModel(config, sd)) {
                body.run(lm, v, sd);
            }
        });
    }

    static GenerationOptions greedy(int n, boolean cache) {
        return GenerationOptions.defaults()
                .withTemperature(0)
                .withMaxNewTokens(n)
                .withCache(cache);
    }

    @TestFactory
    Stream<DynamicTest> greedyMatchesReferenceTokenForToken() {
        return generating("greedy == reference greedy", 5, (lm, v, sd) -> {
            RefDecoderOnlyLM ref = v.reference(sd);
            int n = 12;
            Generation cached = lm.generate(PROMPTS, greedy(n, true), null);
            Generation uncached = lm.generate(PROMPTS, greedy(n, false), null);
            for (int s = 0; s < PROMPTS.length; s++) {
                double[] gap = new double[1];
                int[] want = ref.greedy(PROMPTS[s], n, gap);
                // a near-tie would let float32 rounding pick the other token legitimately: these seeds have none
                assertTrue(gap[0] > 1e-3, "sequence " + s + ": reference near-tie " + gap[0] + "; pick another seed");
                assertArrayEquals(want, cached.tokens()[s], "sequence " + s + " with the cache");
                assertArrayEquals(want, uncached.tokens()[s], "sequence " + s + " without the cache");
            }
        });
    }

    @TestFactory
    Stream<DynamicTest> stopsAtEos() {
        return generating("eos stops one sequence, the others go on", 5, (lm, v, sd) -> {
            Generation all = lm.generate(PROMPTS, greedy(8, true), null);
            int eos = all.tokens()[0][2]; // sequence 0 produces it at step 2 (perhaps earlier too)
            Generation stop = lm.generate(PROMPTS, greedy(8, true).withEos(eos), null);
            for (int s = 0; s < PROMPTS.length; s++) {
                int[] full = all.tokens()[s];
                int end = 0;
                while (end < full.length && full[end] != eos) end++;
                int[] want = Arrays.copyOf(full, Math.min(full.length, end + 1));
                assertArrayEquals(want, stop.tokens()[s], "sequence " + s);
            }
        });
    }
}
