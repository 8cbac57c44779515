package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Json;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * JinaBERT's config (a {@code bert} with {@code position_embedding_type: alibi}) and ALiBi's slopes and bias. The
 * slopes are judged by the remote code's own Python function ({@code _get_alibi_head_slopes}, transcribed in
 * tools/make_jina.py, its values in tests/families/jina-bert/expected.json) for powers of two and the other branch
 * (jina-embeddings-v2-base has 12 heads); the whole model by {@code FamiliesTest} on that fixture.
 */
class JinaBertTest {
    static final Path FIXTURE = Path.of("../tests/families/jina-bert/expected.json");

    @Test
    @SuppressWarnings("unchecked")
    void slopesAreTheRemoteCodes() {
        Map<String, Object> x = (Map<String, Object>) Json.read(FIXTURE);
        Map<String, List<Number>> slopes = (Map<String, List<Number>>) x.get("alibi_slopes");
        assertTrue(
                slopes.keySet().containsAll(List.of("6", "8", "12", "16")),
                slopes.keySet().toString());
        for (var e : slopes.entrySet()) {
            int n = Integer.parseInt(e.getKey());
            float[] want = new float[n];
            for (int i = 0; i < n; i++) want[i] = e.getValue().get(i).floatValue(); // torch.Tensor(list): float32
            assertArrayEquals(want, EncoderModel.alibiSlopes(n), n + " heads");
        }
    }

    @Test
    void theConfigReadsAsJinaBert() {
        EncoderConfig c = RotaryFamiliesTest.read("""
                {"model_type": "bert", "position_embedding_type": "alibi", "feed_forward_type": "geglu",
                 "hidden_size": 48, "num_attention_heads": 6, "intermediate_size": 64, "num_hidden_layers": 2,
                 "vocab_size": 600, "max_position_embeddings": 8192, "hidden_act": "gelu",
                 "auto_map": {"AutoModel": "jinaai/jina-bert-implementation--modeling_bert.JinaBertModel"}}""");
        assertTrue(c.alibi());
        assertNull(c.names().position(), "no position table");
        assertEquals(EncoderConfig.Glu.GATE_FIRST, c.variant().glu());
        assertEquals("gelu", c.hiddenAct());
        assertEquals(8192, c.maxTokens());
        assertEquals(JinaBert.NAMES, c.names());
        // jina-embeddings-v2-base-code: the qk-post-norm architecture, named by _name_or_path as TEI reads it
        EncoderConfig code = RotaryFamiliesTest.read("""
                {"_name_or_path": "jinaai/jina-bert-v2-qk-post-norm", "model_type": "bert",
                 "position_embedding_type": "alibi", "feed_forward_type": "geglu", "hidden_size": 48,
                 "num_attention_heads": 6, "intermediate_size": 64, "num_hidden_layers": 2, "vocab_size": 600}""");
        assertEquals(JinaBert.CODE_NAMES, code.names());
        assertEquals(EncoderConfig.Glu.GATE_SECOND, code.variant().glu(), "up * act(gated): the second half");
        assertEquals("attention.self.layer_norm_q.", code.names().queryNorm());
        assertEquals("layer_norm_1.", code.names().secondAttentionNorm());
        String why = RotaryFamiliesTest.refused("""
                {"model_type": "bert", "position_embedding_type": "alibi", "feed_forward_type": "reglu",
                 "hidden_size": 48, "num_attention_heads": 6}""");
        assertTrue(why.contains("feed_forward_type \"reglu\"") && why.contains("not run yet"), why);
        why = RotaryFamiliesTest.refused("""
                {"model_type": "bert", "position_embedding_type": "alibi", "hidden_size": 48,
                 "num_attention_heads": 6}""");
        assertTrue(why.contains("feed_forward_type \"original\""), why);
        why = RotaryFamiliesTest.refused("""
                {"model_type": "bert", "position_embedding_type": "relative_key", "hidden_size": 48,
                 "num_attention_heads": 6}""");
        assertTrue(why.contains("position_embedding_type \"relative_key\" is not supported"), why);
    }

    @Test
    void theBiasIsMinusSlopeTimesDistance() {
        // slopes for 2 heads: 2^-4, 2^-8 (start = 2^-(2^-(1 - 3)) = 2^-4); the bias holds offsets -(L-1) .. L-1
        float[] s = EncoderModel.alibiSlopes(2);
        assertArrayEquals(new float[] {0.0625f, 0.00390625f}, s);
        Tensor b = EncoderModel.alibiBias(s, 4);
        assertArrayEquals(new int[] {2, 7}, b.shape().dims());
        float[] want = new float[14];
        for (int h = 0; h < 2; h++) for (int d = -3; d <= 3; d++) want[h * 7 + d + 3] = -s[h] * Math.abs(d);
        assertArrayEquals(want, b.data());
    }
}
