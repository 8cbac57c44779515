package io.attn.engine;

import static io.attn.engine.Fixtures.E;
import static io.attn.engine.Fixtures.bitwiseEqual;
import static io.attn.engine.Fixtures.input;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.io.SafeTensors;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's defaults protect the caller: a model built from the caller's arrays copies them ({@code loadOwned}
 * is the explicit no-copy form); NaN and Inf are refused in weights (once, at load) and in inputs (per call, unless
 * the request opts out); argument errors are {@code AttnException} BAD_INPUT; {@code "batch_first": false} takes and
 * returns {@code (L, B, E)}; a mask the module's forward does not take is refused.
 */
class SafeDefaultsTest {
    @TempDir
    Path dir;

    static AttnException.Code code(Executable e) {
        return assertThrows(AttnException.class, e).code();
    }

    @Test
    void aModelBuiltFromTheCallersArraysDoesNotSeeLaterChangesToThem() {
        Map<String, Tensor> sd = Fixtures.encoderLayerWeights();
        Tensor x = input(1, 2, 5, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.ENCODER_LAYER_JSON, sd)) {
            float[] before = m.encode(x).data();
            for (Tensor t : sd.values()) java.util.Arrays.fill(t.data(), 0.5f); // the caller reuses its arrays
            assertTrue(bitwiseEqual(before, m.encode(x).data()), "the model changed with the caller's arrays");
        }
    }

    @Test
    void loadOwnedTakesTheArraysAsTheyAreAndComputesTheSame() {
        Tensor x = input(2, 2, 5, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel copied = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights());
                AttnModel owned =
                        engine.loadOwned(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights(), "weights.bin")) {
            assertTrue(bitwiseEqual(copied.encode(x).data(), owned.encode(x).data()));
            Map<String, Tensor> bad = Fixtures.encoderLayerWeights();
            bad.remove("linear1.bias");
            AttnException e = assertThrows(
                    AttnException.class, () -> engine.loadOwned(Fixtures.ENCODER_LAYER_JSON, bad, "weights.bin"));
            assertTrue(e.getMessage().startsWith("weights.bin: missing tensor 'linear1.bias'"), e.getMessage());
        }
    }

    @Test
    void nonFiniteWeightsAreRefusedAtLoadByEveryPath() {
        Map<String, Tensor> sd = Fixtures.encoderLayerWeights();
        sd.get("linear2.weight").data()[7] = Float.NaN;
        Path file = dir.resolve("nan.safetensors");
        SafeTensors.write(file, sd, Map.of("config", Fixtures.ENCODER_LAYER_JSON));
        try (Engine engine = Fixtures.cpu()) {
            for (Executable load : List.<Executable>of(
                    () -> engine.load(Fixtures.ENCODER_LAYER_JSON, sd),
                    () -> engine.loadOwned(Fixtures.ENCODER_LAYER_JSON, sd, "sd"),
                    () -> engine.load(file))) {
                AttnException e = assertThrows(AttnException.class, load);
                assertEquals(AttnException.Code.NON_FINITE, e.code());
                assertTrue(
                        e.getMessage().endsWith("tensor 'linear2.weight' holds NaN at [0, 7]: weights must be finite"),
                        e.getMessage());
            }
            assertTrue(engine.models().isEmpty());
        }
    }

    @Test
    void nonFiniteInputsAreRefusedPerCallUnlessTheRequestOptsOut() {
        try (Engine engine = Fixtures.cpu();
                AttnModel mha = engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights())) {
            Tensor x = input(3, 2, 4, E), mem = input(4, 2, 6, E);
            Tensor nan = x.copy();
            nan.data()[E + 3] = Float.NaN;
            AttnException e = assertThrows(AttnException.class, () -> mha.run(Request.of(nan)));
            assertEquals(AttnException.Code.NON_FINITE, e.code());
            assertEquals("input holds NaN at [0, 1, 3]: inputs must be finite", e.getMessage());
            Tensor inf = mem.copy();
            inf.data()[0] = Float.NEGATIVE_INFINITY;
            assertEquals(
                    AttnException.Code.NON_FINITE,
                    code(() -> mha.run(Request.of(x).withMemory(inf))));
            Tensor badMask = Tensor.zeros(2, 6);
            badMask.data()[1] = Float.NaN;
            assertEquals(
                    AttnException.Code.NON_FINITE,
                    code(() -> mha.run(Request.of(x).withMemory(mem).withKeyPaddingMask(badMask, false))));
            // -inf is how a float mask masks out: accepted
            Tensor ninf = Tensor.zeros(2, 6);
            ninf.data()[5] = Float.NEGATIVE_INFINITY;
            assertTrue(mha.run(Request.of(x).withMemory(mem).withKeyPaddingMask(ninf, false))
                    .output()
                    .allFinite());
            // the explicit opt-out lets the NaN through the arithmetic
            Tensor y = mha.run(Request.of(nan).withFiniteCheck(false)).output();
            assertFalse(y.allFinite());
        }
    }

    @Test
    void argumentErrorsAreBadInput() {
        AttnException t =
                assertThrows(AttnException.class, () -> EngineOptions.defaults().withThreads(-1));
        assertEquals(AttnException.Code.BAD_INPUT, t.code());
        assertEquals("threads must be >= 0 (0 = one per physical core), got -1", t.getMessage());
        assertEquals(
                AttnException.Code.BAD_INPUT,
                code(() -> Engine.open(EngineOptions.defaults().withDevice("gpu"))));
        try (Engine engine = Fixtures.cpu()) {
            assertEquals(AttnException.Code.BAD_INPUT, code(() -> engine.load(Fixtures.MHA_JSON, null)));
            Map<String, Tensor> withNull = new LinkedHashMap<>(Fixtures.mhaWeights());
            withNull.put("out_proj.bias", null);
            assertEquals(AttnException.Code.BAD_INPUT, code(() -> engine.load(Fixtures.MHA_JSON, withNull)));
        }
    }

    @Test
    void batchFirstFalseTakesAndReturnsSequenceFirst() {
        String seqFirst = Fixtures.ENCODER_LAYER_JSON.replace("}", ",\"batch_first\":false}");
        Tensor x = input(5, 3, 4, E); // (B, L, E)
        try (Engine engine = Fixtures.cpu();
                AttnModel bf = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights());
                AttnModel sf = engine.load(seqFirst, Fixtures.encoderLayerWeights())) {
            assertEquals(false, sf.config().get("batch_first"));
            assertEquals(true, bf.config().get("batch_first"));
            Tensor y = bf.encode(x);
            Tensor z = sf.encode(transpose01(x));
            assertEquals(Shape.of(4, 3, E), z.shape());
            assertTrue(bitwiseEqual(y.data(), transpose01(z).data()));
            // weights are (B, L, S) either way, as PyTorch returns them
            Result w = sf.run(Request.of(transpose01(x)).withAttentionWeights(AttentionWeights.AVERAGED));
            assertEquals(Shape.of(3, 4, 4), w.attentionWeights("self_attn").shape());
            // encodeBatch lays the batch out sequence-first itself
            List<Tensor> seqs = new ArrayList<>(List.of(input(6, 2, E), input(7, 4, E)));
            List<Tensor> got = sf.encodeBatch(seqs), want = bf.encodeBatch(seqs);
            for (int i = 0; i < seqs.size(); i++)
                assertTrue(bitwiseEqual(want.get(i).data(), got.get(i).data()));
        }
    }

    @Test
    void aMaskTheForwardDoesNotTakeIsBadInput() {
        try (Engine engine = Fixtures.cpu();
                AttnModel enc = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights())) {
            Tensor x = input(8, 1, 3, E);
            AttnException e = assertThrows(
                    AttnException.class, () -> enc.run(Request.of(x).withTgtMask(Tensor.zeros(3, 3), true)));
            assertEquals(AttnException.Code.BAD_INPUT, e.code());
            assertEquals(
                    "tgt_mask is not an argument of TransformerEncoderLayer's forward (its masks are [attn_mask,"
                            + " key_padding_mask])",
                    e.getMessage());
        }
    }

    static Tensor transpose01(Tensor t) {
        int p = t.dim(0), q = t.dim(1), e = t.dim(2);
        Tensor o = Tensor.zeros(q, p, e);
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) System.arraycopy(t.data(), (i * q + j) * e, o.data(), (j * p + i) * e, e);
        return o;
    }
}
