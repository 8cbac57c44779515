package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.OpParams;
import io.attn.io.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How Gemma 3's text configs read ({@code gemma3_text}: EmbeddingGemma): the fixture's transformers-5 config (whose
 * outputs {@code FamiliesTest} checks against transformers), the older keys the hub's configs hold, transformers'
 * defaults, and what attn refuses by name. The expected values are transformers' rules written out: {@code
 * Gemma3TextConfig} (the bidirectional window {@code sliding_window // 2 + 1} exclusive, the layer pattern, the rope
 * parameters per layer kind) and {@code Gemma3TextScaledWordEmbedding} / {@code Gemma3Attention} (the scales).
 */
class GemmaFamilyTest {
    static EncoderConfig read(String json) {
        return DecoderFamiliesTest.read(json);
    }

    @Test
    @SuppressWarnings("unchecked")
    void theFixturesConfig() {
        Map<String, Object> json = (Map<String, Object>) Json.read(Path.of("../tests/families/gemma3/config.json"));
        ModelConfig mc = ModelConfig.parse(json, "config.json");
        EncoderConfig c = mc.encoder();
        EncoderConfig.Decoder d = c.variant().decoder();
        EncoderConfig.Gemma g = d.gemma();
        assertEquals("gemma3_text", c.modelType());
        assertEquals((float) Math.sqrt(48), g.embedScale());
        assertEquals((float) (1 / Math.sqrt(24)), g.attentionScale()); // query_pre_attn_scalar 24, not head_dim 32
        assertTrue(g.bidirectional());
        assertFalse(d.causal());
        assertEquals(List.of(true, false, true), d.windowedLayers());
        assertEquals(new EncoderConfig.Rotary(1e4f, 32), g.localRotary());
        assertEquals(
                new EncoderConfig.Rotary(1e6f, 32, OpParams.Rope.Scaling.linear(2)),
                c.variant().rotary());
        assertEquals(1, d.kvHeads());
        assertEquals(32, c.headDim());
        assertTrue(d.qkNorm());
        assertEquals(10, d.slidingWindow());
        assertTrue(d.windowed(0) && !d.windowed(1) && d.windowed(2));
        assertEquals("gelu_pytorch_tanh", c.hiddenAct());
        assertEquals(EncoderConfig.Glu.GATE_FIRST, c.variant().glu());
        assertFalse(
                c.variant().qkvBias() || c.variant().outBias() || c.variant().ffnInBias());
        Map<String, Object> args = mc.arguments();
        assertEquals("|i - j| <= 5 in layers [0, 2]", args.get("sliding_window"));
        assertEquals(10000.0, args.get("local_rope_theta"));
        assertEquals("multi-query (1 key/value head)", args.get("attention"));
        assertTrue(((String) args.get("architecture")).startsWith("decoder (Gemma 3): bidirectional attention"));
    }

    @Test
    void theOlderKeysOfEmbeddingGemmasShape() {
        // EmbeddingGemma-300m's shape with the keys transformers 4.x wrote: no layer_types (the default pattern of 6),
        // rope_theta / rope_local_base_freq, rope_scaling null, sliding_window 512 (|i - j| <= 256)
        EncoderConfig c = read("""
                {"model_type": "gemma3_text", "architectures": ["Gemma3TextModel"], "hidden_size": 768,
                 "num_hidden_layers": 24, "num_attention_heads": 3, "num_key_value_heads": 1, "head_dim": 256,
                 "intermediate_size": 1152, "vocab_size": 262144, "max_position_embeddings": 2048,
                 "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
                 "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": null,
                 "sliding_window": 512, "use_bidirectional_attention": true, "attn_logit_softcapping": null,
                 "final_logit_softcapping": null, "attention_bias": false}""");
        EncoderConfig.Decoder d = c.variant().decoder();
        List<Boolean> local = new ArrayList<>();
        for (int i = 0; i < 24; i++) local.add(i % 6 != 5); // layers 5, 11, 17, 23 full
        assertEquals(local, d.windowedLayers());
        assertEquals(512, d.slidingWindow());
        assertEquals(0.0625f, d.gemma().attentionScale());
        assertEquals((float) Math.sqrt(768), d.gemma().embedScale());
        assertEquals(new EncoderConfig.Rotary(1e6f, 256), c.variant().rotary());
        assertEquals(new EncoderConfig.Rotary(1e4f, 256), d.gemma().localRotary());
    }

    @Test
    void legacyRopeScalingGoesToTheFullLayersOnly() {
        // Gemma 3 4B's text config: linear 8 on the global layers, causal (no use_bidirectional_attention)
        EncoderConfig c = read("""
                {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "num_key_value_heads": 4,
                 "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                 "sliding_window": 1024}""");
        EncoderConfig.Decoder d = c.variant().decoder();
        assertEquals(OpParams.Rope.Scaling.linear(8), c.variant().rotary().scaling());
        assertEquals(new EncoderConfig.Rotary(1e4f, 256), d.gemma().localRotary());
        assertTrue(d.causal());
        assertEquals(1024, d.slidingWindow());
        Map<String, Object> args = DecoderFamiliesTest.config("""
                {"model_type": "gemma3_text", "num_hidden_layers": 2, "layer_types": ["sliding_attention",
                 "full_attention"], "sliding_window": 16}""").arguments();
        assertEquals("causal, i - 16 < j <= i in layers [0]", args.get("sliding_window"));
    }

    @Test
    void ropeParametersFilledInAsTransformersDoes() {
        // what Gemma3TextConfig(**config).rope_parameters gives (transformers 5.18, checked in Python): a flat
        // rope_parameters counts for neither kind (the defaults 1e6 / 1e4)
        EncoderConfig flat = read("""
                {"model_type": "gemma3_text", "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}""");
        assertEquals(new EncoderConfig.Rotary(1e6f, 256), flat.variant().rotary());
        assertEquals(
                new EncoderConfig.Rotary(1e4f, 256),
                flat.variant().decoder().gemma().localRotary());
        // a kind missing, or one without its theta: the older top-level key's
        EncoderConfig partial = read("""
                {"model_type": "gemma3_text", "rope_local_base_freq": 50.0,
                 "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 2000000.0}}}""");
        assertEquals(new EncoderConfig.Rotary(2e6f, 256), partial.variant().rotary());
        assertEquals(
                new EncoderConfig.Rotary(50f, 256),
                partial.variant().decoder().gemma().localRotary());
        // a top-level rope_scaling over the nested form: the full layers take it, the sliding ones not
        EncoderConfig scaled = read("""
                {"model_type": "gemma3_text", "rope_local_base_freq": 50.0,
                 "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 2000000.0},
                                     "sliding_attention": {"rope_type": "default"}},
                 "rope_scaling": {"rope_type": "linear", "factor": 4.0}}""");
        assertEquals(
                new EncoderConfig.Rotary(2e6f, 256, OpParams.Rope.Scaling.linear(4)),
                scaled.variant().rotary());
        assertEquals(
                new EncoderConfig.Rotary(50f, 256),
                scaled.variant().decoder().gemma().localRotary());
        // "type" alone: transformers keeps the default rope (and warns); refused rather than read either way
        assertTrue(DecoderFamiliesTest.refused("""
                        {"model_type": "gemma3_text", "rope_scaling": {"type": "linear", "factor": 2.0}}""").contains("rope_scaling names its kind as \"type\""));
    }

    @Test
    void aClassifierReadsTheLastTokenThatIsNotThePadToken() {
        // Gemma3TextConfig's pad_token_id defaults to 0, Qwen3Config's to None (the last token)
        ClassifierHead gemma = DecoderFamiliesTest.config("""
                {"model_type": "gemma3_text", "architectures": ["Gemma3TextForSequenceClassification"],
                 "num_labels": 1}""").head();
        assertEquals(ClassifierHead.Pool.LAST, gemma.pool());
        assertEquals(0, gemma.padTokenId());
        assertEquals("score.", gemma.out());
        assertFalse(gemma.outBias());
        ClassifierHead qwen = DecoderFamiliesTest.config("""
                {"model_type": "qwen3", "architectures": ["Qwen3ForSequenceClassification"], "num_labels": 1}""").head();
        assertEquals(-1, qwen.padTokenId());
        assertEquals(7, DecoderFamiliesTest.config("""
                                {"model_type": "qwen3", "architectures": ["Qwen3ForSequenceClassification"],
                                 "pad_token_id": 7}""").head().padTokenId());
    }

    @Test
    void transformersDefaults() {
        EncoderConfig c = read("{\"model_type\": \"gemma3_text\"}");
        EncoderConfig.Decoder d = c.variant().decoder();
        assertEquals(2304, c.hiddenSize());
        assertEquals(26, c.numHiddenLayers());
        assertEquals(4096, d.slidingWindow());
        assertEquals(256, d.headDim());
        assertEquals(0.0625f, d.gemma().attentionScale());
        assertTrue(d.causal());
        // no window: a null sliding_window, or one that reaches every position
        EncoderConfig.Decoder noWindow = read("{\"model_type\": \"gemma3_text\", \"sliding_window\": null}")
                .variant()
                .decoder();
        assertEquals(0, noWindow.slidingWindow());
        // its sliding_attention layers keep their own rope (rope_local_base_freq) without a window
        assertTrue(noWindow.slidingLayer(0) && !noWindow.windowed(0) && !noWindow.slidingLayer(5));
        assertEquals(0, read("""
                        {"model_type": "gemma3_text", "sliding_window": 512, "use_bidirectional_attention": true,
                         "max_position_embeddings": 256}""").variant().decoder().slidingWindow());
        assertNull(read("{\"model_type\": \"qwen3\"}").variant().decoder().gemma());
    }

    @Test
    void otherSettingsAreRefusedByName() {
        assertTrue(DecoderFamiliesTest.refused("""
                        {"model_type": "gemma3_text", "attn_logit_softcapping": 50.0}""").contains("attn_logit_softcapping 50.0 is not supported"));
        assertTrue(DecoderFamiliesTest.refused("""
                        {"model_type": "gemma3_text", "num_hidden_layers": 2,
                         "layer_types": ["sliding_attention", "chunked_attention"]}""").contains("layer_types holds \"chunked_attention\""));
        assertTrue(DecoderFamiliesTest.refused("{\"model_type\": \"gemma3_text\", \"sliding_window\": 0}")
                .contains("sliding_window must be positive, got 0"));
        assertTrue(DecoderFamiliesTest.refused("""
                        {"model_type": "gemma3_text", "rope_parameters": {"full_attention":
                         {"rope_type": "yarn", "factor": 4.0}}}""")
                .contains("rope_parameters.full_attention.rope_type \"yarn\" is not supported"));
        assertTrue(DecoderFamiliesTest.refused("{\"model_type\": \"gemma3_text\", \"hidden_activation\": \"relu\"}")
                .contains("hidden_activation \"relu\" is not supported"));
    }
}
