package io.attn.reference.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.tensor.Tensor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Names and shapes match PyTorch's state_dict(); dicts are deterministic and accepted by the reference. */
class RandomStateDictsTest {

    @Test
    void multiheadAttentionNamesAndShapes() {
        Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(8, true, 1);
        assertEquals(
                List.of("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"),
                List.copyOf(sd.keySet()));
        assertArrayEquals(new int[] {24, 8}, sd.get("in_proj_weight").shape().dims());
        assertArrayEquals(new int[] {24}, sd.get("in_proj_bias").shape().dims());
        assertArrayEquals(new int[] {8, 8}, sd.get("out_proj.weight").shape().dims());
        assertEquals(
                List.of("in_proj_weight", "out_proj.weight"),
                List.copyOf(RandomStateDicts.multiheadAttention(8, false, 1).keySet()));
        // U(-1/sqrt(8), 1/sqrt(8))
        for (float v : sd.get("in_proj_weight").data()) assertTrue(Math.abs(v) <= 1 / Math.sqrt(8));
    }

    @Test
    void encoderLayerNamesMatchPyTorch() {
        // torch.nn.TransformerEncoderLayer(4, 2, 6).state_dict().keys()
        List<String> expected = List.of(
                "self_attn.in_proj_weight",
                "self_attn.in_proj_bias",
                "self_attn.out_proj.weight",
                "self_attn.out_proj.bias",
                "linear1.weight",
                "linear1.bias",
                "linear2.weight",
                "linear2.bias",
                "norm1.weight",
                "norm1.bias",
                "norm2.weight",
                "norm2.bias");
        Map<String, Tensor> sd = RandomStateDicts.encoderLayer(LayerConfig.of(4, 2, 6), 1);
        assertEquals(expected, List.copyOf(sd.keySet()));
        assertArrayEquals(new int[] {6, 4}, sd.get("linear1.weight").shape().dims());
        assertArrayEquals(new int[] {4, 6}, sd.get("linear2.weight").shape().dims());
    }

    @Test
    void sameSeedSameValuesOtherSeedOtherValues() {
        LayerConfig cfg = LayerConfig.of(4, 2, 6);
        Map<String, Tensor> a = RandomStateDicts.decoderLayer(cfg, 5), b = RandomStateDicts.decoderLayer(cfg, 5);
        Map<String, Tensor> c = RandomStateDicts.decoderLayer(cfg, 6);
        for (String k : a.keySet()) {
            assertArrayEquals(a.get(k).data(), b.get(k).data(), 0f, k);
            assertNotEquals(a.get(k).data()[0], c.get(k).data()[0], k);
        }
    }

    @Test
    void everyModuleDictIsAcceptedByTheReference() {
        for (boolean bias : new boolean[] {true, false}) {
            LayerConfig lc = LayerConfig.of(4, 2, 6).withBias(bias).withActivation("gelu");
            TransformerConfig cfg = new TransformerConfig(2, 1, lc);
            Map<String, Tensor> sd = RandomStateDicts.transformer(cfg, 9);
            Tensor src = RandomStateDicts.uniform(1, -1, 1, 2, 5, 4);
            Tensor tgt = RandomStateDicts.uniform(2, -1, 1, 2, 3, 4);
            DTensor out = RefTransformer.transformer(sd, cfg, src, tgt, true, null, null, null)
                    .output();
            assertArrayEquals(new int[] {2, 3, 4}, out.shape());
            for (double v : out.data()) assertTrue(Double.isFinite(v));
            assertEquals(bias, sd.containsKey("decoder.norm.bias"));
            Map<String, Tensor> dec = RandomStateDicts.decoder(lc, 2, true, 3);
            RefTransformer.decoder(dec, "", lc, 2, true, tgt, src, null, null, null, null, true);
        }
        // a bias present although the config says bias=False is rejected
        LayerConfig noBias = LayerConfig.of(4, 2, 6).withBias(false);
        Map<String, Tensor> sd = RandomStateDicts.encoderLayer(LayerConfig.of(4, 2, 6), 1);
        Tensor x = RandomStateDicts.uniform(1, -1, 1, 1, 2, 4);
        assertThrows(
                IllegalArgumentException.class,
                () -> RefTransformer.encoderLayer(sd, "", noBias, x, null, null, false));
    }
}
