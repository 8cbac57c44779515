package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.io.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How GTE and NomicBERT configs read: transformers 5's keys (the committed fixtures' form, whose outputs {@code
 * FamiliesTest} checks), the remote code's keys of the hub checkpoints (nomic-embed-text-v1.5, Alibaba-NLP's {@code
 * new}), and the settings attn does not implement, refused by name.
 */
class RotaryFamiliesTest {
    @SuppressWarnings("unchecked")
    static EncoderConfig read(String json) {
        return ModelConfig.parse((Map<String, Object>) Json.parse(json), "config.json")
                .encoder();
    }

    static String refused(String json) {
        AttnException e = assertThrows(AttnException.class, () -> read(json));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertTrue(e.getMessage().startsWith("config.json: "), e.getMessage());
        return e.getMessage();
    }

    @Test
    void gteOfTransformers() {
        EncoderConfig c = read("""
                {"model_type": "gte", "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
                 "num_hidden_layers": 2, "vocab_size": 431, "max_position_embeddings": 64, "type_vocab_size": 1,
                 "rope_parameters": {"rope_theta": 160000.0, "rope_type": "default"}}""");
        assertEquals(new EncoderConfig.Rotary(160000f, 8), c.variant().rotary());
        assertEquals(EncoderConfig.Glu.GATE_SECOND, c.variant().glu());
        assertEquals("gelu", c.hiddenAct());
        assertEquals(1, c.typeVocabSize());
        assertNull(c.names().key()); // fused qkv_proj
        assertEquals(
                new EncoderConfig.Rotary(160000f, 64),
                read("{\"model_type\": \"gte\"}").variant().rotary());
    }

    @Test
    @SuppressWarnings("unchecked")
    void gteOfTheRemoteCode() {
        EncoderConfig c = read("""
                {"model_type": "new", "auto_map": {"AutoModel": "Alibaba-NLP/new-impl--modeling.NewModel"},
                 "hidden_size": 768, "num_attention_heads": 12, "rope_theta": 20000, "rope_scaling": null,
                 "position_embedding_type": "rope", "layer_norm_type": "layer_norm", "pack_qkv": true,
                 "logn_attention_scale": false, "type_vocab_size": 0, "max_position_embeddings": 8192}""");
        assertEquals(new EncoderConfig.Rotary(20000f, 64), c.variant().rotary());
        assertEquals(0, c.typeVocabSize());
        // gte-base-en-v1.5's fixed NTK scaling (theta 500000, factor 2): frequencies of base 1e6, each / 2^(2/64)
        EncoderConfig ntk = read("{\"model_type\": \"new\", \"hidden_size\": 768, \"num_attention_heads\": 12,"
                + " \"rope_theta\": 500000, \"rope_scaling\": {\"factor\": 2.0, \"type\": \"ntk\"}}");
        var scaling = io.attn.graph.OpParams.Rope.Scaling.ntk(2.0);
        assertEquals(
                new EncoderConfig.Rotary(500000f, 64, scaling), ntk.variant().rotary());
        var freq =
                new io.attn.graph.OpParams.Rope(500000f, 64, 0, io.attn.graph.OpParams.Rope.Positions.RANGE, scaling);
        float div = (float) Math.pow(2.0, 2.0 / 64);
        assertEquals(1f / div, freq.invFreq(0));
        assertEquals((1f / (float) Math.pow(1e6, 2f / 64)) / div, freq.invFreq(1));
        assertEquals("ntk, factor 2.0", scaling.describe());
        // a factor of 1 scales nothing (the remote code's cache keeps the plain frequencies)
        assertEquals(
                new EncoderConfig.Rotary(20000f, 64),
                read("{\"model_type\": \"new\", \"rope_theta\": 20000, \"rope_scaling\": {\"type\": \"ntk\","
                                + " \"factor\": 1}}")
                        .variant()
                        .rotary());
        // what the remote code does not run, or attn does not: named
        assertTrue(refused("{\"model_type\": \"new\", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}}")
                .contains("rope_scaling type \"dynamic\" is not supported for GTE (only \"ntk\""));
        assertTrue(refused("{\"model_type\": \"new\", \"rope_scaling\": {\"type\": \"ntk\", \"factor\": 2.0,"
                        + " \"mixed_b\": 0.6}}")
                .contains("rope_scaling mixed_b 0.6 is not supported"));
        assertTrue(refused("{\"model_type\": \"new\", \"rope_scaling\": {\"type\": \"ntk\", \"factor\": 0.5}}")
                .contains("rope_scaling factor 0.5 is not supported"));
        assertTrue(refused("{\"model_type\": \"new\", \"rope_scaling\": {\"type\": \"ntk\"}}")
                .contains("rope_scaling factor is missing"));
        // transformers' rope_parameters in a new config: read as before (theta, no scaling); with rope_scaling too,
        // refused
        assertEquals(
                new EncoderConfig.Rotary(30000f, 64),
                read("{\"model_type\": \"new\", \"rope_parameters\": {\"rope_theta\": 30000, \"rope_type\":"
                                + " \"default\"}}")
                        .variant()
                        .rotary());
        assertTrue(refused("{\"model_type\": \"new\", \"rope_parameters\": {\"rope_theta\": 30000},"
                        + " \"rope_scaling\": {\"type\": \"ntk\", \"factor\": 2.0}}")
                .contains("rope_scaling and rope_parameters both set"));
        // scaling the decoders run is still refused where the family has none
        assertTrue(
                refused("{\"model_type\": \"gte\", \"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 2.0}}")
                        .contains("rope scaling (linear, factor 2.0) is not supported for GTE"));
        assertTrue(
                refused("{\"model_type\": \"nomic_bert\", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}}")
                        .contains("rope scaling (linear, factor 2.0) is not supported for NomicBERT"));
        // the remote code's NewForSequenceClassification (gte-multilingual-reranker-base): its NewPooler (dense +
        // tanh on the first token) and classifier, as transformers' GteForSequenceClassification has them
        ClassifierHead head = ModelConfig.parse(
                        (Map<String, Object>) Json.parse("{\"model_type\": \"new\", \"num_labels\": 1,"
                                + " \"architectures\": [\"NewForSequenceClassification\"]}"),
                        "config.json")
                .head();
        assertEquals(
                new ClassifierHead(ClassifierHead.Act.TANH, List.of("LABEL_0"), "pooler.dense.", "classifier."), head);
        assertTrue(refused("{\"model_type\": \"new\", \"logn_attention_scale\": true}")
                .contains("logn_attention_scale"));
        assertTrue(refused("{\"model_type\": \"new\", \"pack_qkv\": false}").contains("pack_qkv"));
        assertTrue(refused("{\"model_type\": \"new\", \"layer_norm_type\": \"rms_norm\"}")
                .contains("layer_norm_type"));
        assertTrue(
                refused("{\"model_type\": \"gte\", \"rope_parameters\": {\"rope_type\": \"dynamic\", \"factor\": 2}}")
                        .contains("rope_type \"dynamic\""));
    }

    @Test
    void nomicOfTransformers() {
        EncoderConfig c = read("""
                {"model_type": "nomic_bert", "hidden_size": 32, "num_attention_heads": 4, "head_dim": 8,
                 "intermediate_size": 64, "hidden_act": "silu", "rope_parameters": {"rope_theta": 1000.0,
                 "rope_type": "default", "partial_rotary_factor": 0.5}}""");
        assertEquals(new EncoderConfig.Rotary(1000f, 4), c.variant().rotary());
        assertEquals(EncoderConfig.Glu.GATE_FIRST, c.variant().glu());
        assertEquals(
                new EncoderConfig.Variant(
                        c.variant().rotary(), EncoderConfig.Glu.GATE_FIRST, false, false, false, false),
                c.variant());
        assertEquals("mlp.fc12.", c.names().ffnGate());
        assertTrue(refused("{\"model_type\": \"nomic_bert\", \"hidden_size\": 32, \"num_attention_heads\": 4,"
                        + " \"head_dim\": 16}")
                .contains("head_dim 16"));
    }

    @Test
    void nomicOfTheRemoteCode() {
        // nomic-embed-text-v1.5's config.json keys
        EncoderConfig c = read("""
                {"model_type": "nomic_bert", "activation_function": "swiglu", "layer_norm_epsilon": 1e-12,
                 "mlp_fc1_bias": false, "mlp_fc2_bias": false, "n_embd": 768, "n_head": 12, "n_inner": 3072,
                 "n_layer": 12, "n_positions": 8192, "prenorm": false, "qkv_proj_bias": false,
                 "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": false,
                 "rotary_scaling_factor": null, "type_vocab_size": 2, "use_rms_norm": false, "causal": false,
                 "parallel_block": false, "vocab_size": 30528}""");
        assertEquals(768, c.hiddenSize());
        assertEquals(12, c.numHiddenLayers());
        assertEquals(3072, c.intermediateSize());
        assertEquals(8192, c.maxPositionEmbeddings());
        assertEquals("silu", c.hiddenAct());
        assertEquals(new EncoderConfig.Rotary(1000f, 64), c.variant().rotary());
        assertEquals(
                32,
                read("{\"model_type\": \"nomic_bert\", \"rotary_emb_fraction\": 0.5}")
                        .variant()
                        .rotary()
                        .dims());
        assertTrue(refused("{\"model_type\": \"nomic_bert\", \"rotary_emb_interleaved\": true}")
                .contains("rotary_emb_interleaved"));
        assertTrue(refused("{\"model_type\": \"nomic_bert\", \"rotary_scaling_factor\": 2.0}")
                .contains("rotary_scaling_factor"));
        assertTrue(
                refused("{\"model_type\": \"nomic_bert\", \"prenorm\": true}").contains("prenorm"));
        assertTrue(refused("{\"model_type\": \"nomic_bert\", \"activation_function\": \"gelu\"}")
                .contains("activation_function"));
    }

    @Test
    void modernBertOfTransformers() {
        EncoderConfig c = read("""
                {"model_type": "modernbert", "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 48,
                 "num_hidden_layers": 3, "vocab_size": 707, "local_attention": 8, "norm_bias": false,
                 "layer_types": ["full_attention", "sliding_attention", "sliding_attention"],
                 "rope_parameters": {"full_attention": {"rope_theta": 160000.0, "rope_type": "default"},
                                     "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}}""");
        EncoderConfig.Variant v = c.variant();
        assertEquals(new EncoderConfig.Rotary(160000f, 8), v.rotary());
        assertEquals(
                new EncoderConfig.SlidingWindow(
                        java.util.List.of(false, true, true), 4, new EncoderConfig.Rotary(10000f, 8)),
                v.window());
        assertEquals(EncoderConfig.Glu.GATE_FIRST, v.glu());
        assertEquals(new EncoderConfig.PreNorm("final_norm."), v.preNorm());
        assertTrue(!v.normBias() && !v.qkvBias() && !v.outBias() && !v.ffnInBias() && !v.ffnOutBias());
        assertEquals(0, c.typeVocabSize());
        assertEquals("gelu", c.hiddenAct());
        // transformers 4's keys (ModernBERT-base's hub config): every third layer global from layer 0
        EncoderConfig old = read("""
                {"model_type": "modernbert", "num_hidden_layers": 4, "global_attn_every_n_layers": 3,
                 "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "local_attention": 128}""");
        assertEquals(
                new EncoderConfig.SlidingWindow(
                        java.util.List.of(false, true, true, false), 64, new EncoderConfig.Rotary(10000f, 64)),
                old.variant().window());
        assertEquals(8192, old.maxPositionEmbeddings());
        assertTrue(refused("{\"model_type\": \"modernbert\", \"num_hidden_layers\": 1, \"layer_types\": [\"chunked\"]}")
                .contains("layer_types holds \"chunked\""));
        assertTrue(refused("{\"model_type\": \"modernbert\", \"num_hidden_layers\": 2,"
                        + " \"layer_types\": [\"full_attention\"]}")
                .contains("layer_types names 1 layers, num_hidden_layers is 2"));
        assertTrue(refused("""
                        {"model_type": "modernbert", "rope_parameters": {"sliding_attention":
                         {"rope_theta": 10000.0, "rope_type": "linear", "factor": 2}}}""").contains("rope_parameters.sliding_attention.rope_type \"linear\""));
    }
    /**
     * The NTK frequencies against torch's, computed as the remote code computes them (tools/make_gte_ntk.py's {@code
     * remote_ntk_inv_freq}: {@code 1 / ((theta * F) ** (arange(0, 64, 2).float() / 64)) / F ** (2 / 64)} in torch 2.13
     * float32) for gte-base-en-v1.5's settings (theta 500000, factor 2) and the gte-ntk fixture's (20000, 8) at head size 64: within 1 ulp each (torch's float32
     * {@code pow} is not correctly rounded), mostly equal.
     */
    @Test
    void ntkFrequenciesAreTorchs() {
        int[][] torch = {
            {
                0x3f7a83b2, 0x3f22adf2, 0x3ed3483a, 0x3e8933e7, 0x3e3231a1, 0x3de76e81, 0x3d964996, 0x3d433016,
                0x3cfd80b8, 0x3ca49ebc, 0x3c55cd70, 0x3c0ad6e3, 0x3bb451cc, 0x3b6a313f, 0x3b18148a, 0x3ac58425,
                0x3a80436e, 0x3a269573, 0x39d85a57, 0x398c7edf, 0x39367874, 0x38ecfc6a, 0x3899e4f5, 0x3847df52,
                0x3801cb1d, 0x37a89228, 0x375aef09, 0x370e2beb, 0x36b8a5ae, 0x366fd01f, 0x361bbaeb, 0x35ca41b0
            },
            {
                0x3f6fe4b9, 0x3f24f6d4, 0x3ee2e091, 0x3e9c0373, 0x3e569135, 0x3e138c67, 0x3dcaecd6, 0x3d8b8aef,
                0x3d3fea2e, 0x3d03f8aa, 0x3cb58074, 0x3c799f20, 0x3c2ba75e, 0x3bec13d7, 0x3ba25712, 0x3b5f44b0,
                0x3b198824, 0x3ad32776, 0x3a913390, 0x3a47b280, 0x3a0952b2, 0x39bcdcac, 0x3981df42, 0x39329d5b,
                0x38f5a6a1, 0x38a8ec5e, 0x38685281, 0x381fc1ff, 0x37dbb783, 0x379716f0, 0x374fcb9c, 0x370ee449
            }
        };
        float[] theta = {500000f, 20000f};
        double[] factor = {2.0, 8.0};
        int off = 0;
        for (int c = 0; c < 2; c++) {
            var p = new io.attn.graph.OpParams.Rope(
                    theta[c],
                    64,
                    0,
                    io.attn.graph.OpParams.Rope.Positions.RANGE,
                    io.attn.graph.OpParams.Rope.Scaling.ntk(factor[c]));
            for (int i = 0; i < 32; i++) {
                int ulps = Math.abs(Float.floatToIntBits(p.invFreq(i)) - torch[c][i]);
                assertTrue(
                        ulps <= 1,
                        "theta " + theta[c] + " pair " + i + ": " + p.invFreq(i) + " vs torch "
                                + Float.intBitsToFloat(torch[c][i]));
                off += ulps;
            }
        }
        assertTrue(off <= 4, off + " of 64 frequencies one ulp off torch's");
    }
    /**
     * The hub's own configs of gte-base-en-v1.5 and gte-large-en-v1.5 (Alibaba-NLP, remote code: every key they hold,
     * auto_map and the remote code's switches included): read whole, with their NTK scaling.
     */
    @Test
    void theHubsGteV15ConfigsRead() {
        String common = "\"architectures\": [\"NewModel\"], \"auto_map\": {\"AutoConfig\":"
                + " \"Alibaba-NLP/new-impl--configuration.NewConfig\", \"AutoModel\":"
                + " \"Alibaba-NLP/new-impl--modeling.NewModel\"}, \"attention_probs_dropout_prob\": 0.0,"
                + " \"classifier_dropout\": null, \"hidden_act\": \"gelu\", \"hidden_dropout_prob\": 0.1,"
                + " \"initializer_range\": 0.02, \"layer_norm_eps\": 1e-12, \"layer_norm_type\": \"layer_norm\","
                + " \"logn_attention_clip1\": false, \"logn_attention_scale\": false, \"max_position_embeddings\": 8192,"
                + " \"model_type\": \"new\", \"pack_qkv\": true, \"pad_token_id\": 0, \"position_embedding_type\":"
                + " \"rope\", \"rope_scaling\": {\"factor\": 2.0, \"type\": \"ntk\"}, \"torch_dtype\": \"float32\","
                + " \"unpad_inputs\": false, \"use_memory_efficient_attention\": false, \"vocab_size\": 30528";
        EncoderConfig base = read("{" + common + ", \"hidden_size\": 768, \"intermediate_size\": 3072,"
                + " \"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"rope_theta\": 500000,"
                + " \"type_vocab_size\": 0}");
        assertEquals(
                new EncoderConfig.Rotary(500000f, 64, io.attn.graph.OpParams.Rope.Scaling.ntk(2.0)),
                base.variant().rotary());
        assertEquals(0, base.typeVocabSize());
        EncoderConfig large = read("{" + common + ", \"hidden_size\": 1024, \"intermediate_size\": 4096,"
                + " \"num_attention_heads\": 16, \"num_hidden_layers\": 24, \"rope_theta\": 160000,"
                + " \"type_vocab_size\": 2}");
        assertEquals(
                new EncoderConfig.Rotary(160000f, 64, io.attn.graph.OpParams.Rope.Scaling.ntk(2.0)),
                large.variant().rotary());
        assertEquals(24, large.numHiddenLayers());
    }
}
