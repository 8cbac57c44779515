package io.attn.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefDecoderOnlyLM;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The public generation API ({@link Engine#loadLanguageModel}, {@link LanguageModel#generate}) against the
 * double-precision {@link RefDecoderOnlyLM}: greedy decoding of a batch of prompts of different lengths, with the cache
 * and without, matches the reference's greedy tokens on every device that is available, for a model built in code and
 * one read from a safetensors file; the end token stops a sequence; the listener sees every token in order; bad options
 * and prompts are BAD_INPUT with one line; closing the engine closes its language models.
 *
 * <p>The models and seeds are those of {@code io.attn.generate.DecoderOnlyTest} (vocabulary 23, width 16, 2 layers),
 * whose reference has no near-tie (gap > 1e-3) in its greedy choices: float32 rounding (~1e-6 relative on the logits)
 * cannot flip a token.
 */
class LanguageModelTest {
    static final int V = 23, E = 16, H = 4, F = 32, LAYERS = 2, MAX_LEN = 24;
    static final int[][] PROMPTS = {{3, 9, 1, 14, 7}, {5}, {20, 2, 11}};

    @TempDir
    Path dir;

    /** A model variant: its config JSON, the reference's layer config and the LM flags. */
    record Variant(
            String name,
            String json,
            LayerConfig layer,
            boolean learned,
            boolean tied,
            boolean finalNorm,
            boolean headBias) {
        Map<String, Tensor> weights(long seed) {
            return RandomStateDicts.decoderOnlyLM(layer, V, LAYERS, MAX_LEN, learned, tied, finalNorm, headBias, seed);
        }

        RefDecoderOnlyLM reference(Map<String, Tensor> sd) {
            return new RefDecoderOnlyLM(sd, layer, LAYERS, learned, tied, finalNorm);
        }
    }

    static String json(String positional, boolean normFirst, String activation, boolean tied, boolean finalNorm) {
        return "{\"module\":\"DecoderOnlyLM\",\"vocab_size\":" + V + ",\"d_model\":" + E + ",\"nhead\":" + H
                + ",\"num_layers\":" + LAYERS + ",\"dim_feedforward\":" + F + ",\"max_len\":" + MAX_LEN
                + ",\"positional\":\"" + positional + "\",\"norm_first\":" + normFirst + ",\"activation\":\""
                + activation + "\",\"tied_embeddings\":" + tied + ",\"final_norm\":" + finalNorm + "}";
    }

    static final List<Variant> VARIANTS = List.of(
            new Variant(
                    "post-norm relu sinusoidal untied",
                    json("sinusoidal", false, "relu", false, false),
                    LayerConfig.of(E, H, F),
                    false,
                    false,
                    false,
                    true),
            new Variant(
                    "pre-norm gelu learned tied final-norm",
                    json("learned", true, "gelu", true, true),
                    LayerConfig.of(E, H, F).withActivation("gelu").withNormFirst(true),
                    true,
                    true,
                    true,
                    false));

    static final Variant TINY = VARIANTS.get(1);

    /** The engine on {@code device}, or the test skipped when the device is not there. */
    static Engine open(String device) {
        try {
            return Engine.open(EngineOptions.defaults().withDevice(device));
        } catch (AttnException e) {
            Assumptions.assumeTrue(e.code() != AttnException.Code.DEVICE_UNAVAILABLE, e.getMessage());
            throw e;
        }
    }

    interface Body {
        void run(Engine engine, Variant v) throws Exception;
    }

    static Stream<DynamicTest> everywhere(String name, Body body) {
        List<DynamicTest> out = new ArrayList<>();
        for (String device : List.of("cpu", "cuda"))
            for (Variant v : VARIANTS)
                out.add(DynamicTest.dynamicTest(device + " " + v.name() + ": " + name, () -> {
                    try (Engine engine = open(device)) {
                        body.run(engine, v);
                    }
                }));
        return out.stream();
    }

    static void assertReferenceGreedy(Variant v, Map<String, Tensor> sd, Generation g, int n, String what) {
        RefDecoderOnlyLM ref = v.reference(sd);
        assertEquals(PROMPTS.length, g.tokens().length);
        for (int s = 0; s < PROMPTS.length; s++) {
            double[] gap = new double[1];
            int[] want = ref.greedy(PROMPTS[s], n, gap);
            assertTrue(gap[0] > 1e-3, "sequence " + s + ": reference near-tie " + gap[0]);
            assertArrayEquals(want, g.tokens()[s], what + ", sequence " + s);
        }
    }

    @TestFactory
    Stream<DynamicTest> greedyMatchesTheReferenceTokenForToken() {
        return everywhere("greedy == reference greedy, with and without the cache", (engine, v) -> {
            Map<String, Tensor> sd = v.weights(5);
            int n = 12;
            try (LanguageModel lm = engine.loadLanguageModel(v.json(), sd)) {
                assertEquals(V, lm.vocabSize());
                assertEquals(MAX_LEN, lm.maxLength());
                assertEquals("DecoderOnlyLM", lm.config().get("module"));
                GenerationOptions greedy = GenerationOptions.defaults().withMaxNewTokens(n);
                List<int[]> heard = new ArrayList<>();
                Generation cached = lm.generate(PROMPTS, greedy, (seq, id) -> heard.add(new int[] {seq, id}));
                assertReferenceGreedy(v, sd, cached, n, "cached");
                assertReferenceGreedy(v, sd, lm.generate(PROMPTS, greedy.withCache(false), null), n, "uncached");
                assertEquals(PROMPTS.length * n, cached.generated());
                assertTrue(cached.tokensPerSecond() > 0 && cached.decodeTokensPerSecond() > 0);
                assertTrue(cached.prefillNanos() > 0 && cached.prefillNanos() <= cached.totalNanos());
                // the listener heard every token, in each sequence's order
                assertEquals(cached.generated(), heard.size());
                for (int s = 0; s < PROMPTS.length; s++) {
                    int seq = s;
                    int[] got = heard.stream()
                            .filter(t -> t[0] == seq)
                            .mapToInt(t -> t[1])
                            .toArray();
                    assertArrayEquals(cached.tokens()[s], got, "listener, sequence " + s);
                }
                // one prompt alone gets the tokens it gets in the batch
                assertArrayEquals(cached.tokens()[1], lm.generate(PROMPTS[1], greedy));
            }
        });
    }

    @TestFactory
    Stream<DynamicTest> aModelFileGeneratesLikeTheModelBuiltInCode() {
        return everywhere("safetensors file (config in the metadata) == reference", (engine, v) -> {
            Map<String, Tensor> sd = v.weights(5);
            Path f = dir.resolve(engine.device() + "-" + v.learned() + ".safetensors");
            SafeTensors.write(f, sd, Map.of("config", v.json()));
            try (LanguageModel lm = engine.loadLanguageModel(f)) {
                assertReferenceGreedy(
                        v,
                        sd,
                        lm.generate(PROMPTS, GenerationOptions.defaults().withMaxNewTokens(8), null),
                        8,
                        "from file");
            }
        });
    }

    @Test
    void eosStopsOneSequenceAndTheOthersGoOn() {
        try (Engine engine = open("cpu");
                LanguageModel lm = engine.loadLanguageModel(TINY.json(), TINY.weights(5))) {
            GenerationOptions o = GenerationOptions.defaults().withMaxNewTokens(8);
            Generation all = lm.generate(PROMPTS, o, null);
            int eos = all.tokens()[0][2];
            Generation stop = lm.generate(PROMPTS, o.withEos(eos), null);
            for (int s = 0; s < PROMPTS.length; s++) {
                int[] full = all.tokens()[s];
                int end = 0;
                while (end < full.length && full[end] != eos) end++;
                assertArrayEquals(Arrays.copyOf(full, Math.min(full.length, end + 1)), stop.tokens()[s], "seq " + s);
            }
        }
    }

    @Test
    void samplingIsReproducibleWithASeedAndConcurrentCallsAgree() throws Exception {
        try (Engine engine = open("cpu");
                LanguageModel lm = engine.loadLanguageModel(TINY.json(), TINY.weights(5))) {
            GenerationOptions o = GenerationOptions.defaults()
                    .withMaxNewTokens(10)
                    .withTemperature(1.5)
                    .withTopK(10)
                    .withTopP(0.95)
                    .withSeed(7);
            int[][] a = lm.generate(PROMPTS, o, null).tokens();
            assertTrue(Arrays.deepEquals(a, lm.generate(PROMPTS, o, null).tokens()));
            assertFalse(
                    Arrays.deepEquals(
                            a, lm.generate(PROMPTS, o.withSeed(8), null).tokens()),
                    "another seed");
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<int[][]>> futures = new ArrayList<>();
                for (int i = 0; i < 8; i++)
                    futures.add(pool.submit(() -> lm.generate(PROMPTS, o, null).tokens()));
                for (Future<int[][]> f : futures) assertTrue(Arrays.deepEquals(a, f.get()), "concurrent call");
            } finally {
                pool.shutdown();
            }
        }
    }

    static void badInput(Executable call, String fragment) {
        AttnException e = assertThrows(AttnException.class, call);
        assertEquals(AttnException.Code.BAD_INPUT, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void badOptionsAndPromptsAreBadInput() {
        GenerationOptions d = GenerationOptions.defaults();
        badInput(() -> d.withMaxNewTokens(-1), "maxNewTokens must be >= 0, got -1");
        badInput(() -> d.withTemperature(-0.5), "temperature must be >= 0");
        badInput(() -> d.withTemperature(Double.NaN), "temperature must be >= 0");
        badInput(() -> d.withTemperature(Double.POSITIVE_INFINITY), "temperature must be >= 0");
        badInput(() -> d.withTopK(-3), "topK must be >= 0");
        badInput(() -> d.withTopP(0), "topP must be in (0, 1], got 0.0");
        badInput(() -> d.withTopP(1.5), "topP must be in (0, 1]");
        badInput(() -> d.withEos(-2), "eos must be a token id, or -1");
        try (Engine engine = open("cpu");
                LanguageModel lm = engine.loadLanguageModel(TINY.json(), TINY.weights(5))) {
            badInput(() -> lm.generate(new int[0][], d, null), "no prompts");
            badInput(() -> lm.generate((int[][]) null, d, null), "no prompts");
            badInput(() -> lm.generate(new int[][] {{1, 2}, {}}, d, null), "prompt 1 is empty");
            badInput(() -> lm.generate(new int[][] {{1, 23}}, d, null), "token id 23 at position 1 is outside");
            badInput(() -> lm.generate(new int[][] {{-1}}, d, null), "token id -1 at position 0 is outside");
            badInput(() -> lm.generate(PROMPTS, d.withEos(V), null), "eos id 23 is outside the vocabulary of 23");
            badInput(
                    () -> lm.generate(PROMPTS, d.withMaxNewTokens(MAX_LEN), null), "exceeds the model's max_len of 24");
            // the model is still usable after its callers' mistakes
            assertEquals(3, lm.generate(PROMPTS, d.withMaxNewTokens(1), null).generated());
            assertEquals(0, lm.generate(PROMPTS, d.withMaxNewTokens(0), null).generated());
            // a listener's own exception reaches the caller unchanged
            IllegalStateException mine = new IllegalStateException("listener gave up");
            assertSame(
                    mine,
                    assertThrows(
                            IllegalStateException.class,
                            () -> lm.generate(PROMPTS, d.withMaxNewTokens(4), (s, id) -> {
                                throw mine;
                            })));
        }
    }

    @Test
    void badModelsAreOneLineErrors() throws Exception {
        try (Engine engine = open("cpu")) {
            badInput(
                    () -> engine.loadLanguageModel(
                            "{\"module\":\"MultiheadAttention\",\"embed_dim\":16,\"num_heads\":4}", Map.of()),
                    "config \"module\" must be \"DecoderOnlyLM\"");
            badInput(() -> engine.loadLanguageModel("[1]", TINY.weights(5)), "must be a JSON object");
            badInput(() -> engine.loadLanguageModel(TINY.json(), null), "state dict is null");
            badInput(() -> engine.loadLanguageModel((Path) null), "weights path is null");
            Map<String, Tensor> missing = new LinkedHashMap<>(TINY.weights(5));
            missing.remove("pos.weight");
            AttnException e = assertThrows(AttnException.class, () -> engine.loadLanguageModel(TINY.json(), missing));
            assertEquals(AttnException.Code.SHAPE_MISMATCH, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("missing tensor 'pos.weight'"), e.getMessage());
            Path f = dir.resolve("mha.safetensors");
            SafeTensors.write(f, Fixtures.mhaWeights(), Map.of("config", Fixtures.MHA_JSON));
            badInput(() -> engine.loadLanguageModel(f), "must be \"DecoderOnlyLM\", got MultiheadAttention");
            assertTrue(engine.languageModels().isEmpty(), "a failed load registers nothing");
        }
    }

    @Test
    void closingTheEngineClosesItsLanguageModels() {
        Engine engine = open("cpu");
        GenerationOptions o = GenerationOptions.defaults().withMaxNewTokens(4);
        LanguageModel a = engine.loadLanguageModel(TINY.json(), TINY.weights(5));
        LanguageModel b = engine.loadLanguageModel(TINY.json(), TINY.weights(6));
        assertEquals(2, engine.languageModels().size());
        a.close();
        a.close(); // idempotent
        assertTrue(a.isClosed());
        assertEquals(List.of(b), engine.languageModels());
        assertThrows(IllegalStateException.class, () -> a.generate(PROMPTS, o, null));
        assertNotEquals(0, b.generate(PROMPTS, o, null).generated());
        engine.close();
        assertTrue(b.isClosed(), "closing the engine closes its language models");
        assertThrows(IllegalStateException.class, () -> b.generate(PROMPTS, o, null));
        assertThrows(IllegalStateException.class, () -> engine.loadLanguageModel(TINY.json(), TINY.weights(5)));
        b.close(); // still a no-op
    }
}
