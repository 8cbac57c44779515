package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.graph.OpParams;
import io.attn.io.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How the decoder embedders' configs read (transformers 5's keys, as the committed fixtures of {@code tests/families}
 * hold them, whose outputs {@code FamiliesTest} checks), and the settings attn does not run, refused by name.
 */
class DecoderFamiliesTest {
    @SuppressWarnings("unchecked")
    static ModelConfig config(String json) {
        return ModelConfig.parse((Map<String, Object>) Json.parse(json), "config.json");
    }

    static EncoderConfig read(String json) {
        return config(json).encoder();
    }

    static String refused(String json) {
        AttnException e = assertThrows(AttnException.class, () -> read(json));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertTrue(e.getMessage().startsWith("config.json: "), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        return e.getMessage();
    }

    @Test
    void qwen3() {
        EncoderConfig c = read("""
                {"model_type": "qwen3", "hidden_size": 48, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "head_dim": 16, "intermediate_size": 96, "num_hidden_layers": 2, "vocab_size": 703,
                 "max_position_embeddings": 128, "rms_norm_eps": 1e-06, "hidden_act": "silu",
                 "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}, "attention_bias": false,
                 "sliding_window": null, "use_sliding_window": false, "tie_word_embeddings": true,
                 "layer_types": ["full_attention", "full_attention"]}""");
        assertEquals(
                new EncoderConfig.Decoder(2, 16, true, "norm."), c.variant().decoder());
        assertEquals(16, c.headDim()); // head_dim x heads (64) != hidden (48)
        assertEquals(new EncoderConfig.Rotary(1e6f, 16), c.variant().rotary());
        assertEquals(EncoderConfig.Glu.GATE_FIRST, c.variant().glu());
        assertFalse(c.variant().qkvBias());
        assertEquals(1e-6f, c.layerNormEps());
        Map<String, Object> args = config("{\"model_type\": \"qwen3\", \"num_key_value_heads\": 8}")
                .arguments();
        assertEquals("grouped-query (4 query heads per key/value head)", args.get("attention"));
        assertEquals(8, args.get("num_key_value_heads"));
        assertEquals(true, args.get("qk_norm"));
    }

    @Test
    void qwen2HasQkvBiasesAndNoQkNorm() {
        EncoderConfig c = read("""
                {"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}, "sliding_window": 4096,
                 "use_sliding_window": false}""");
        assertTrue(c.variant().qkvBias());
        assertFalse(c.variant().outBias());
        assertEquals(
                new EncoderConfig.Decoder(2, 8, false, "norm."), c.variant().decoder());
    }

    @Test
    void llamaMultiQueryAndItsBiases() {
        EncoderConfig c = read("""
                {"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                 "rope_theta": 500000.0, "attention_bias": true, "mlp_bias": true}""");
        assertEquals(1, c.variant().decoder().kvHeads());
        assertEquals(new EncoderConfig.Rotary(500000f, 8), c.variant().rotary()); // the top-level rope_theta
        assertTrue(c.variant().qkvBias() && c.variant().outBias());
        assertTrue(c.variant().ffnInBias() && c.variant().ffnOutBias());
        assertEquals(
                "multi-query (1 key/value head)",
                config("{\"model_type\": \"llama\", \"num_key_value_heads\": 1}")
                        .arguments()
                        .get("attention"));
        assertEquals(
                4,
                read("{\"model_type\": \"llama\", \"num_attention_heads\": 4}")
                        .variant()
                        .decoder()
                        .kvHeads());
    }

    @Test
    void slidingWindowsOfMistralInEveryLayerAndOfQwenPerLayer() {
        // Mistral's window narrower than the positions: every layer's attention keeps keys i - 16 < j <= i
        assertEquals(
                16,
                read("{\"model_type\": \"mistral\", \"sliding_window\": 16, \"max_position_embeddings\": 128}")
                        .variant()
                        .decoder()
                        .slidingWindow());
        // no window, or one as wide as the positions: it never cuts (0: full causal attention)
        EncoderConfig open =
                read("{\"model_type\": \"mistral\", \"sliding_window\": null, \"num_key_value_heads\": 2}");
        assertEquals(2, open.variant().decoder().kvHeads());
        assertEquals(0, open.variant().decoder().slidingWindow());
        assertEquals(
                0,
                read("{\"model_type\": \"mistral\", \"sliding_window\": 128, \"max_position_embeddings\": 128}")
                        .variant()
                        .decoder()
                        .slidingWindow());
        assertTrue(refused("{\"model_type\": \"mistral\", \"sliding_window\": 0}")
                .contains("sliding_window must be positive"));
        // Qwen's windows: on the layers from max_window_layers, only with use_sliding_window (transformers drops the
        // window otherwise), or on layer_types' sliding_attention layers
        EncoderConfig.Decoder qwen = read("""
                        {"model_type": "qwen2", "use_sliding_window": true, "sliding_window": 64,
                         "max_window_layers": 2, "num_hidden_layers": 4, "max_position_embeddings": 128}""").variant().decoder();
        assertEquals(64, qwen.slidingWindow());
        assertEquals(List.of(false, false, true, true), qwen.windowedLayers());
        assertEquals(0, read("""
                                {"model_type": "qwen2", "use_sliding_window": false, "sliding_window": 64,
                                 "max_window_layers": 2, "num_hidden_layers": 4, "max_position_embeddings": 128}""").variant().decoder().slidingWindow());
        EncoderConfig.Decoder types = read("""
                        {"model_type": "qwen3", "use_sliding_window": true, "sliding_window": 8, "num_hidden_layers": 3,
                         "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}""").variant().decoder();
        assertTrue(types.windowed(0) && !types.windowed(1) && types.windowed(2));
        assertEquals(
                "causal, i - 8 < j <= i in layers [0, 2]",
                config("""
                                {"model_type": "qwen3", "use_sliding_window": true, "sliding_window": 8,
                                 "num_hidden_layers": 3,
                                 "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}""").arguments().get("sliding_window"));
        // every layer windowed: no per-layer list (Mistral's form)
        assertEquals(null, read("""
                                {"model_type": "qwen3", "use_sliding_window": true, "sliding_window": 8,
                                 "num_hidden_layers": 2, "layer_types": ["sliding_attention", "sliding_attention"]}""").variant().decoder().windowedLayers());
        assertTrue(refused("{\"model_type\": \"qwen3\", \"num_hidden_layers\": 2, \"layer_types\": [\"full_attention\","
                        + " \"chunked_attention\"]}")
                .contains("layer_types holds \"chunked_attention\""));
        assertTrue(
                refused("{\"model_type\": \"qwen3\", \"num_hidden_layers\": 3, \"layer_types\": [\"full_attention\"]}")
                        .contains("layer_types has 1 entries for 3 layers"));
        assertTrue(refused("{\"model_type\": \"qwen2\", \"num_hidden_layers\": 2, \"sliding_window\": 8,"
                        + " \"layer_types\": [\"full_attention\", \"sliding_attention\"]}")
                .contains("there is no sliding_window (use_sliding_window is false)"));
    }

    /**
     * Llama 3.1+'s rope scaling, as transformers 5 saves it ({@code rope_parameters}) and as the hub's configs hold it
     * (Llama-3.2-1B: top-level {@code rope_theta} and {@code rope_scaling}): the same settings. transformers'
     * frequencies themselves are judged in {@code TransformersOpsTest} and the llama3 family fixture.
     */
    @Test
    void llama3RopeScalingInBothForms() {
        var expected = new EncoderConfig.Rotary(500000f, 16, OpParams.Rope.Scaling.llama3(32, 1, 4, 8192));
        EncoderConfig saved = read("""
                {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_parameters":
                 {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}""");
        assertEquals(expected, saved.variant().rotary());
        EncoderConfig hub = read("""
                {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500000.0,
                 "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                  "original_max_position_embeddings": 8192, "rope_type": "llama3"}}""");
        assertEquals(expected, hub.variant().rotary());
        var linear = read("""
                {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "rope_scaling": {"type": "linear", "factor": 2.0}}""");
        assertEquals(OpParams.Rope.Scaling.linear(2), linear.variant().rotary().scaling());
        assertEquals(
                OpParams.Rope.Scaling.NONE,
                read("{\"model_type\": \"qwen2\", \"rope_scaling\": null}")
                        .variant()
                        .rotary()
                        .scaling());
        assertEquals(
                "llama3, factor 32.0, low_freq_factor 1.0, high_freq_factor 4.0, original_max_position_embeddings 8192",
                ModelConfig.parse((java.util.Map<String, Object>) io.attn.io.Json.parse("""
                                        {"model_type": "llama", "rope_scaling": {"factor": 32.0,
                                         "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"""), "config.json")
                        .arguments()
                        .get("rope_scaling"));
    }

    @Test
    void otherSettingsAreRefusedByName() {
        assertTrue(
                refused("{\"model_type\": \"llama\", \"rope_parameters\": {\"rope_type\": \"llama3\", \"factor\": 8}}")
                        .contains("rope_parameters.low_freq_factor is missing"));
        assertTrue(refused("{\"model_type\": \"qwen3\", \"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4}}")
                .contains("rope_parameters.rope_type \"yarn\" is not supported"));
        assertTrue(refused("{\"model_type\": \"llama\", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}}")
                .contains("rope_scaling.rope_type \"dynamic\" is not supported"));
        assertTrue(refused("{\"model_type\": \"llama\", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0}}")
                .contains("factor 0.0 must be positive"));
        assertTrue(refused("""
                        {"model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8,
                         "low_freq_factor": 4, "high_freq_factor": 1, "original_max_position_embeddings": 8192}}""").contains("low_freq_factor (4.0) < high_freq_factor (1.0)"));
        assertTrue(refused("{\"model_type\": \"qwen2\", \"num_attention_heads\": 6, \"num_key_value_heads\": 4}")
                .contains("num_attention_heads 6 is not a multiple of num_key_value_heads 4"));
        assertTrue(
                refused("{\"model_type\": \"llama\", \"hidden_act\": \"relu\"}").contains("hidden_act \"relu\""));
    }
}
