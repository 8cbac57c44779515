package io.attn.engine;

import static io.attn.engine.Fixtures.E;
import static io.attn.engine.Fixtures.H;
import static io.attn.engine.Fixtures.bitwiseEqual;
import static io.attn.engine.Fixtures.input;
import static io.attn.engine.Fixtures.scaledError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefTransformer;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The public API on the CPU backend: every entry point against the independent double-precision reference, the input
 * forms (float[], FloatBuffer, MemorySegment) against each other bitwise, error codes, and close semantics.
 *
 * <p>Bound: outputs within 1e-5 of the reference, relative to max(1, max |reference|). The models are tiny (E = 16, F =
 * 32): float32 rounding over sums of at most 32 terms and a softmax stays near 1e-6; a wrong mask, scale or weight
 * moves outputs by 1e-2 or more.
 */
class EngineApiTest {
    static final double TOL = 1e-5;

    @TempDir
    Path dir;

    @Test
    void encodeMatchesTheReference() {
        Map<String, Tensor> sd = Fixtures.encoderLayerWeights();
        Tensor x = input(1, 2, 5, E);
        Tensor pad = Tensor.of(new float[] {0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, 2, 5);
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.ENCODER_LAYER_JSON, sd)) {
            assertEquals("cpu", engine.device());
            assertEquals("TransformerEncoderLayer", m.kind());
            assertEquals(E, m.width());
            var want = RefTransformer.encoderLayer(sd, "", Fixtures.LAYER, x, null, null, false);
            assertTrue(scaledError(m.encode(x).data(), want.output().data()) <= TOL);
            var wantPad = RefTransformer.encoderLayer(
                    sd, "", Fixtures.LAYER, x, null, io.attn.reference.layers.Mask.bool(pad), false);
            assertTrue(scaledError(m.encode(x, pad).data(), wantPad.output().data()) <= TOL);
            // unbatched (L, E): the first batch item alone
            Tensor y0 = m.encode(x.slice0(0, 1).reshape(5, E));
            assertEquals(Shape.of(5, E), y0.shape());
            assertTrue(
                    scaledError(y0.data(), java.util.Arrays.copyOf(want.output().data(), 5 * E)) <= TOL);
        }
    }

    @Test
    void selfAndCrossAttentionMatchTheReference() {
        Map<String, Tensor> sd = Fixtures.mhaWeights();
        Tensor x = input(2, 2, 6, E), mem = input(3, 2, 9, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.MHA_JSON, sd)) {
            Result self = m.selfAttention(x, true, AttentionWeights.AVERAGED);
            var want = RefAttention.multiheadAttention(sd, "", E, H, x, x, x, null, null, false, true, true, true);
            assertTrue(scaledError(self.output().data(), want.output().data()) <= TOL);
            assertEquals(Shape.of(2, 6, 6), self.attentionWeights("attn").shape());
            assertTrue(scaledError(
                            self.attentionWeights("attn").data(),
                            want.averagedWeights().data())
                    <= TOL);

            Result cross = m.crossAttention(x, mem, AttentionWeights.PER_HEAD);
            var wantX =
                    RefAttention.multiheadAttention(sd, "", E, H, x, mem, mem, null, null, false, false, true, false);
            assertTrue(scaledError(cross.output().data(), wantX.output().data()) <= TOL);
            assertEquals(Shape.of(2, H, 6, 9), cross.attentionWeights("attn").shape());
            assertTrue(scaledError(
                            cross.attentionWeights("attn").data(),
                            wantX.headWeights().data())
                    <= TOL);

            // the general entry point gives the typed ones' results, bitwise
            Result general = m.run(Request.of(x).withMemory(mem).withAttentionWeights(AttentionWeights.PER_HEAD));
            assertTrue(bitwiseEqual(general.output().data(), cross.output().data()));
            assertTrue(m.selfAttention(x, false, AttentionWeights.NONE)
                    .attentionWeights()
                    .isEmpty());
        }
    }

    @Test
    void errorsSayWhichArgumentTheyAreAbout() {
        // AttnException.argument(): a caller that read each argument from a file names the file without parsing text
        Tensor x = input(5, 2, 6, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights())) {
            io.attn.AttnException wide = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class, () -> m.run(Request.of(x).withMemory(input(6, 2, 9, E + 1))));
            assertEquals("memory", wide.argument(), wide.getMessage());
            io.attn.AttnException batch = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class, () -> m.run(Request.of(x).withMemory(input(6, 3, 9, E))));
            assertEquals("memory", batch.argument(), batch.getMessage());
            io.attn.AttnException mask = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class, () -> m.run(Request.of(x).withAttnMask(Tensor.zeros(6, 5), true)));
            assertEquals("attn_mask", mask.argument(), mask.getMessage());
            float[] bad = x.data().clone();
            bad[7] = Float.NaN;
            io.attn.AttnException nan = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class, () -> m.run(Request.of(Tensor.of(bad, 2, 6, E))));
            assertEquals(io.attn.AttnException.Code.NON_FINITE, nan.code());
            assertEquals("input", nan.argument(), nan.getMessage());
            io.attn.AttnException notOne = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class, () -> engine.load("{\"module\":\"Nope\"}", Map.of()));
            assertEquals(null, notOne.argument(), notOne.getMessage());
        }
    }

    @Test
    void transformerRunsThroughTheGeneralEntryPoint() {
        var cfg = new io.attn.reference.layers.TransformerConfig(2, 1, Fixtures.LAYER);
        Map<String, Tensor> sd = io.attn.reference.layers.RandomStateDicts.transformer(cfg, 13);
        String json = "{\"module\":\"Transformer\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32,"
                + "\"num_encoder_layers\":2,\"num_decoder_layers\":1}";
        Tensor src = input(14, 2, 6, E), tgt = input(15, 2, 4, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(json, sd)) {
            Result r = m.run(
                    Request.of(src).withTarget(tgt).withCausal(true).withAttentionWeights(AttentionWeights.AVERAGED));
            var want = RefTransformer.transformer(sd, cfg, src, tgt, true, null, null, null);
            assertTrue(scaledError(r.output().data(), want.output().data()) <= TOL);
            assertEquals(
                    List.of(
                            "encoder.layers.0.self_attn",
                            "encoder.layers.1.self_attn",
                            "decoder.layers.0.self_attn",
                            "decoder.layers.0.multihead_attn"),
                    List.copyOf(r.attentionWeights().keySet()));
            assertCode(AttnException.Code.BAD_INPUT, () -> m.run(Request.of(src))); // no target
        }
    }

    @Test
    void floatArrayBufferAndSegmentInputsAgree() {
        Tensor x = input(4, 2, 5, E);
        float[] data = x.data();
        try (Engine engine = Fixtures.cpu();
                AttnModel m = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights());
                Arena arena = Arena.ofConfined()) {
            float[] want = m.run(Request.of(data, 2, 5, E)).output().data();

            FloatBuffer heap =
                    FloatBuffer.allocate(data.length + 3).put(new float[3]).put(data);
            heap.position(3);
            assertTrue(
                    bitwiseEqual(want, m.run(Request.of(heap, 2, 5, E)).output().data()));
            assertEquals(3, heap.position()); // not moved
            FloatBuffer direct = ByteBuffer.allocateDirect(4 * data.length)
                    .order(ByteOrder.nativeOrder())
                    .asFloatBuffer()
                    .put(data)
                    .flip();
            assertTrue(bitwiseEqual(
                    want, m.run(Request.of(direct, 2, 5, E)).output().data()));

            MemorySegment seg = arena.allocate(ValueLayout.JAVA_FLOAT, data.length);
            MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_FLOAT, 0, data.length);
            Result r = m.run(Request.of(seg, 2, 5, E));
            assertTrue(bitwiseEqual(want, r.output().data()));

            // outputs back into a buffer and a segment
            MemorySegment out = arena.allocate(ValueLayout.JAVA_FLOAT, want.length);
            Tensors.copyInto(r.output(), out);
            assertTrue(bitwiseEqual(want, out.toArray(ValueLayout.JAVA_FLOAT)));
            FloatBuffer fb = FloatBuffer.allocate(want.length);
            Tensors.copyInto(r.output(), fb);
            assertTrue(bitwiseEqual(want, fb.array()));

            // size and shape disagree: SHAPE_MISMATCH, for each form
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> Request.of(data, 2, 5, E + 1));
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> Request.of(heap, 2, 4, E));
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> Request.of(seg.asSlice(4), 2, 5, E));
        }
    }

    @Test
    void loadsFromFilesAndInCodeAlike() throws Exception {
        Map<String, Tensor> sd = Fixtures.encoderLayerWeights();
        Path withMeta = dir.resolve("enc.safetensors"), bare = dir.resolve("bare.safetensors");
        SafeTensors.write(withMeta, sd, Map.of("config", Fixtures.ENCODER_LAYER_JSON));
        SafeTensors.write(bare, sd, Map.of());
        Path config = Files.writeString(dir.resolve("enc.json"), Fixtures.ENCODER_LAYER_JSON);
        Tensor x = input(5, 1, 4, E);
        try (Engine engine = Fixtures.cpu();
                AttnModel inCode = engine.load(Fixtures.ENCODER_LAYER_JSON, sd);
                AttnModel fromMeta = engine.load(withMeta);
                AttnModel fromConfig = engine.load(bare, config)) {
            float[] want = inCode.encode(x).data();
            assertTrue(bitwiseEqual(want, fromMeta.encode(x).data()));
            assertTrue(bitwiseEqual(want, fromConfig.encode(x).data()));
            assertEquals(3, engine.models().size());
            assertCode(AttnException.Code.BAD_INPUT, () -> engine.load(bare)); // no config anywhere
            assertCode(AttnException.Code.BAD_INPUT, () -> engine.load(dir.resolve("missing.safetensors")));
        }
    }

    @Test
    void encodeBatchEqualsEncodingEachSequenceAlone() {
        List<Tensor> seqs = List.of(input(6, 3, E), input(7, 7, E), input(8, 1, E));
        Map<String, Tensor> single = new java.util.LinkedHashMap<>();
        for (String p : List.of("query", "key", "value")) {
            single.put(p + ".weight", input(p.length(), E, E));
            single.put(p + ".bias", input(p.length() + 1, E));
        }
        try (Engine engine = Fixtures.cpu()) {
            List<AttnModel> models = List.of(
                    engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights()),
                    engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights()),
                    engine.load("{\"module\":\"SelfAttention\",\"embed_size\":16}", single));
            for (AttnModel m : models) {
                List<Tensor> ys = m.encodeBatch(seqs);
                for (int i = 0; i < seqs.size(); i++) {
                    Tensor alone = m.encode(seqs.get(i));
                    assertEquals(alone.shape(), ys.get(i).shape());
                    double[] want = new double[alone.size()];
                    for (int k = 0; k < want.length; k++) want[k] = alone.data()[k];
                    // padded keys get exactly zero weight; only the blocking of sums may differ: float rounding
                    assertTrue(scaledError(ys.get(i).data(), want) <= TOL, m.kind() + " sequence " + i);
                }
            }
        }
    }

    @Test
    void errorsHaveCodesAndLeaveTheModelUsable() {
        try (Engine engine = Fixtures.cpu();
                AttnModel enc = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights())) {
            Tensor x = input(9, 1, 3, E);
            float[] want = enc.encode(x).data();
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> enc.encode(input(9, 1, 3, E + 1)));
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> enc.encode(input(9, 3, E, 1, 1)));
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> enc.encode(x, Tensor.zeros(1, 4)));
            assertCode(AttnException.Code.BAD_INPUT, () -> enc.selfAttention(x, false, AttentionWeights.NONE));
            assertCode(AttnException.Code.BAD_INPUT, () -> enc.run(null));
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> enc.encode(x, Tensor.zeros(1, 3, 1)));
            assertCode(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> enc.run(Request.of(x).withAttnMask(Tensor.zeros(2, 2), true)));
            assertCode(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> enc.run(Request.of(x).withAttnMask(Tensor.zeros(5, 3, 3), false)));
            assertEquals(Shape.of(0, 3, E), enc.encode(Tensor.zeros(0, 3, E)).shape()); // an empty batch is fine
            assertTrue(bitwiseEqual(want, enc.encode(x).data()));

            Map<String, Tensor> missing = new java.util.LinkedHashMap<>(Fixtures.encoderLayerWeights());
            missing.remove("linear1.bias");
            assertCode(AttnException.Code.SHAPE_MISMATCH, () -> engine.load(Fixtures.ENCODER_LAYER_JSON, missing));
            assertCode(AttnException.Code.BAD_INPUT, () -> engine.load("{\"module\":\"Nope\"}", missing));
            assertCode(AttnException.Code.BAD_INPUT, () -> engine.load("{not json", missing));
            String decoder = Fixtures.ENCODER_LAYER_JSON.replace("Encoder", "Decoder");
            try (AttnModel dec =
                    engine.load(decoder, io.attn.reference.layers.RandomStateDicts.decoderLayer(Fixtures.LAYER, 3))) {
                assertCode(AttnException.Code.BAD_INPUT, () -> dec.encode(x));
                assertCode(AttnException.Code.BAD_INPUT, () -> dec.run(Request.of(x))); // no memory
                assertCode(
                        AttnException.Code.SHAPE_MISMATCH,
                        () -> dec.run(Request.of(x).withMemory(input(1, 2, 5, E))));
                assertCode(
                        AttnException.Code.SHAPE_MISMATCH,
                        () -> dec.run(Request.of(x).withMemory(input(1, 1, 5, E - 2))));
                assertEquals(
                        Shape.of(1, 3, E),
                        dec.run(Request.of(x).withMemory(input(1, 1, 5, E)))
                                .output()
                                .shape());
            }
        }
        assertCode(
                AttnException.Code.BAD_INPUT,
                () -> Engine.open(EngineOptions.defaults().withDevice("tpu")));
    }

    @Test
    void closeIsIdempotentAndUseAfterCloseThrows() {
        Engine engine = Fixtures.cpu();
        AttnModel a = engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights());
        AttnModel b = engine.load(Fixtures.ENCODER_LAYER_JSON, Fixtures.encoderLayerWeights());
        Tensor x = input(10, 1, 3, E);
        a.encode(x);
        a.close();
        a.close();
        assertTrue(a.isClosed());
        assertThrows(IllegalStateException.class, () -> a.encode(x));
        assertThrows(IllegalStateException.class, () -> a.run(Request.of(x)));
        assertEquals(List.of(b), engine.models());
        b.encode(x); // the other model is untouched
        engine.close();
        engine.close();
        assertTrue(b.isClosed(), "closing the engine closes its models");
        assertThrows(IllegalStateException.class, () -> b.encode(x));
        assertThrows(IllegalStateException.class, () -> engine.load(Fixtures.MHA_JSON, Fixtures.mhaWeights()));
        b.close(); // still a no-op
    }

    static void assertCode(AttnException.Code code, org.junit.jupiter.api.function.Executable body) {
        AttnException e = assertThrows(AttnException.class, body);
        assertEquals(code, e.code(), e.getMessage());
    }
}
