package io.attn.parity;

import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.Mask;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefTransformer;
import io.attn.reference.layers.TransformerConfig;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Golden cases in golden_torch.py's format (same case names, config keys, input names and mask conventions as the
 * script), with expected outputs from the independent double reference {@code io.attn.reference.layers}: one or more
 * per module kind. Sizes are small so the whole set runs in well under a second.
 */
final class GoldenFixtures {
    private GoldenFixtures() {}

    static final String[] NAMES = {
        "mha_cross_perhead_nobias",
        "mha_self_kpm_boolmask",
        "mha_cross_floatmask3d",
        "mha_self_causal",
        "mha_seqfirst_cross_floatkpm",
        "sdpa_boolmask",
        "sdpa_floatmask_bcast",
        "sdpa_causal_rect_scale",
        "enc_layer_post_relu_causal",
        "enc_layer_pre_gelu_kpm",
        "dec_layer_pre_gelu_causal_kpm",
        "encoder_post_relu_kpm",
        "decoder_pre_gelu_causal",
        "transformer_post_relu"
    };

    static Tensor rand(long seed, int... dims) {
        return RandomStateDicts.uniform(seed, -1, 1, dims);
    }

    /** As golden_torch.padding_mask: (B,S) 0/1, batch i pads its last min(i, S-1) positions. */
    static Tensor padding(int b, int s) {
        Tensor t = Tensor.zeros(b, s);
        for (int i = 1; i < b; i++) for (int j = s - Math.min(i, s - 1); j < s; j++) t.set(1f, i, j);
        return t;
    }

    /** As golden_torch.random_bool_mask: 1 = masked out with probability 0.3, key column 0 always kept. */
    static Tensor boolMask(long seed, int... dims) {
        SplittableRandom r = new SplittableRandom(seed);
        Tensor t = Tensor.zeros(dims);
        int s = dims[dims.length - 1];
        for (int i = 0; i < t.size(); i++) t.data()[i] = i % s != 0 && r.nextDouble() < 0.3 ? 1f : 0f;
        return t;
    }

    /** nn.Transformer.generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere. */
    static Tensor causal(int n) {
        Tensor t = Tensor.zeros(n, n);
        for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++) t.set(Float.NEGATIVE_INFINITY, i, j);
        return t;
    }

    static <V> Map<String, V> map(Object... kv) {
        Map<String, V> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            @SuppressWarnings("unchecked")
            V v = (V) kv[i + 1];
            m.put((String) kv[i], v);
        }
        return m;
    }

    static Map<String, Object> layerKwargs(LayerConfig c) {
        return map(
                "d_model",
                (long) c.dModel(),
                "nhead",
                (long) c.nhead(),
                "dim_feedforward",
                (long) c.dimFeedforward(),
                "dropout",
                0.0,
                "activation",
                c.activation(),
                "layer_norm_eps",
                1e-5,
                "batch_first",
                true,
                "norm_first",
                c.normFirst(),
                "bias",
                c.bias());
    }

    static Map<String, Object> with(Map<String, Object> m, Object... kv) {
        Map<String, Object> r = new LinkedHashMap<>(m);
        r.putAll(map(kv));
        return r;
    }

    /** Writes every case of {@link #NAMES} under {@code root}, then index.json. */
    static void writeAll(Path root) throws IOException {
        GoldenWriter w = new GoldenWriter(root);
        mha(w);
        sdpa(w);
        layers(w);
        w.finish();
    }

    private static void mha(GoldenWriter w) throws IOException {
        // name, E, H, bias, B, L, S, self, kpm, mask kind, causal, average weights (as golden_torch.mha_cases)
        Object[][] specs = {
            {"mha_cross_perhead_nobias", 16, 4, false, 2, 5, 7, false, false, null, false, false},
            {"mha_self_kpm_boolmask", 16, 2, true, 3, 6, 6, true, true, "bool2d", false, true},
            {"mha_cross_floatmask3d", 8, 2, true, 3, 4, 5, false, false, "float3d", false, false},
            {"mha_self_causal", 16, 4, true, 2, 6, 6, true, false, "causal", true, false},
        };
        long seed = 100;
        for (Object[] sp : specs) {
            String name = (String) sp[0];
            int e = (int) sp[1], h = (int) sp[2], b = (int) sp[4], l = (int) sp[5], s = (int) sp[6];
            boolean bias = (boolean) sp[3], self = (boolean) sp[7], kpm = (boolean) sp[8];
            boolean causal = (boolean) sp[10], avg = (boolean) sp[11];
            String mk = (String) sp[9];
            Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(e, bias, seed++);
            Tensor q = rand(seed++, b, l, e);
            Tensor k = self ? q : rand(seed++, b, s, e);
            Tensor v = self ? q : rand(seed++, b, s, e); // cross: key != value
            Tensor kp = kpm ? padding(b, s) : null;
            Tensor am =
                    switch (mk == null ? "" : mk) {
                        case "bool2d" -> boolMask(seed++, l, s);
                        case "float3d" -> rand(seed++, b * h, l, s);
                        case "causal" -> causal(l);
                        default -> null;
                    };
            boolean amBool = "bool2d".equals(mk);
            var r = RefAttention.multiheadAttention(
                    sd, "", e, h, DTensor.of(q), DTensor.of(k), DTensor.of(v), kp, true, am, amBool, causal, true, avg);
            Map<String, Object> fwd = map(
                    "need_weights",
                    true,
                    "average_attn_weights",
                    avg,
                    "is_causal",
                    causal,
                    "attn_mask",
                    am == null ? null : amBool ? "bool" : "float",
                    "key_padding_mask",
                    kpm ? "bool" : null);
            Map<String, Object> cfg = map(
                    "module",
                    "MultiheadAttention",
                    "embed_dim",
                    (long) e,
                    "num_heads",
                    (long) h,
                    "bias",
                    bias,
                    "batch_first",
                    true,
                    "dropout",
                    0.0,
                    "forward",
                    fwd);
            Map<String, Tensor> in = map("query", q, "key", k, "value", v);
            if (kp != null) in.put("key_padding_mask", kp);
            if (am != null) in.put("attn_mask", am);
            w.write(name, cfg, sd, in, map("output", r.output(), "weights", r.weights()));
        }
        // batch_first=False: query, key, value and the output (L, B, E); a float key-padding mask, added to the scores
        Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(12, true, seed++);
        Tensor q = rand(seed++, 2, 4, 12), k = rand(seed++, 2, 5, 12), v = rand(seed++, 2, 5, 12);
        Tensor kp = rand(seed++, 2, 5);
        var r = RefAttention.multiheadAttention(
                sd, "", 12, 3, DTensor.of(q), DTensor.of(k), DTensor.of(v), kp, false, null, false, false, true, true);
        Map<String, Object> cfg = map(
                "module",
                "MultiheadAttention",
                "embed_dim",
                12L,
                "num_heads",
                3L,
                "batch_first",
                false,
                "forward",
                map("need_weights", true, "average_attn_weights", true, "key_padding_mask", "float"));
        w.write(
                "mha_seqfirst_cross_floatkpm",
                cfg,
                sd,
                map(
                        "query",
                        LayerCases.transpose01(q),
                        "key",
                        LayerCases.transpose01(k),
                        "value",
                        LayerCases.transpose01(v),
                        "key_padding_mask",
                        kp),
                map("output", LayerCases.transpose01(r.output()), "weights", r.weights()));
    }

    private static void sdpa(GoldenWriter w) throws IOException {
        // name, B, H, L, S, D, Dv, mask kind, causal, scale
        Object[][] specs = {
            {"sdpa_boolmask", 2, 2, 5, 6, 8, 8, "bool", false, null},
            {"sdpa_floatmask_bcast", 2, 3, 4, 5, 8, 8, "float", false, null},
            {"sdpa_causal_rect_scale", 1, 2, 4, 6, 8, 6, null, true, 0.3},
        };
        long seed = 200;
        for (Object[] sp : specs) {
            int b = (int) sp[1], h = (int) sp[2], l = (int) sp[3], s = (int) sp[4], d = (int) sp[5], dv = (int) sp[6];
            String mk = (String) sp[7];
            boolean causal = (boolean) sp[8];
            Double scale = (Double) sp[9];
            Tensor q = rand(seed++, b, h, l, d), k = rand(seed++, b, h, s, d), v = rand(seed++, b, h, s, dv);
            Tensor am = "bool".equals(mk)
                    ? boolMask(seed++, b, h, l, s)
                    : "float".equals(mk) ? rand(seed++, 1, h, l, s) : null;
            var r = RefAttention.sdpa(q, k, v, am, "bool".equals(mk), causal, scale);
            Map<String, Object> fwd = map(
                    "attn_mask",
                    mk,
                    "is_causal",
                    causal,
                    "scale",
                    scale,
                    "note",
                    "bool attn_mask stored as 1 = masked out (inverted for torch)");
            Map<String, Tensor> in = map("q", q, "k", k, "v", v);
            if (am != null) in.put("attn_mask", am);
            w.write(
                    (String) sp[0],
                    map("module", "scaled_dot_product_attention", "forward", fwd),
                    Map.of(),
                    in,
                    map("output", r.output()));
        }
    }

    private static void layers(GoldenWriter w) throws IOException {
        int b = 2, l = 6, t = 5, s = 7;
        LayerConfig post = LayerConfig.of(16, 4, 32);
        LayerConfig pre = post.withNormFirst(true).withActivation("gelu");

        var esd = RandomStateDicts.encoderLayer(post, 300);
        Tensor x = rand(301, b, l, 16), cm = causal(l);
        w.write(
                "enc_layer_post_relu_causal",
                with(
                        layerKwargs(post),
                        "module",
                        "TransformerEncoderLayer",
                        "forward",
                        map("src_mask", "float", "src_key_padding_mask", null, "is_causal", true)),
                esd,
                map("src", x, "src_mask", cm),
                map(
                        "output",
                        RefTransformer.encoderLayer(esd, "", post, x, Mask.additive(cm), null, true)
                                .output()));

        var esd2 = RandomStateDicts.encoderLayer(pre, 302);
        Tensor kp = padding(b, l);
        w.write(
                "enc_layer_pre_gelu_kpm",
                with(
                        layerKwargs(pre),
                        "module",
                        "TransformerEncoderLayer",
                        "forward",
                        map("src_mask", null, "src_key_padding_mask", "bool", "is_causal", false)),
                esd2,
                map("src", x, "src_key_padding_mask", kp),
                map(
                        "output",
                        RefTransformer.encoderLayer(esd2, "", pre, x, null, Mask.bool(kp), false)
                                .output()));

        var dsd = RandomStateDicts.decoderLayer(pre, 303);
        Tensor tgt = rand(304, b, t, 16), mem = rand(305, b, s, 16), tm = causal(t);
        Tensor tkp = padding(b, t), mkp = padding(b, s);
        Map<String, Object> dfwd = map(
                "tgt_mask",
                "float",
                "tgt_is_causal",
                true,
                "tgt_key_padding_mask",
                "bool",
                "memory_key_padding_mask",
                "bool",
                "memory_mask",
                null);
        w.write(
                "dec_layer_pre_gelu_causal_kpm",
                with(layerKwargs(pre), "module", "TransformerDecoderLayer", "forward", dfwd),
                dsd,
                map(
                        "tgt",
                        tgt,
                        "memory",
                        mem,
                        "tgt_mask",
                        tm,
                        "tgt_key_padding_mask",
                        tkp,
                        "memory_key_padding_mask",
                        mkp),
                map(
                        "output",
                        RefTransformer.decoderLayer(
                                        dsd,
                                        "",
                                        pre,
                                        tgt,
                                        mem,
                                        Mask.additive(tm),
                                        null,
                                        Mask.bool(tkp),
                                        Mask.bool(mkp),
                                        true)
                                .output()));

        var encSd = RandomStateDicts.encoder(post, 2, true, 306);
        w.write(
                "encoder_post_relu_kpm",
                map(
                        "module",
                        "TransformerEncoder",
                        "num_layers",
                        2L,
                        "norm",
                        true,
                        "encoder_layer",
                        layerKwargs(post),
                        "forward",
                        map("mask", null, "src_key_padding_mask", "bool", "is_causal", false)),
                encSd,
                map("src", x, "src_key_padding_mask", kp),
                map(
                        "output",
                        RefTransformer.encoder(encSd, "", post, 2, true, x, null, Mask.bool(kp), false)
                                .output()));

        var decSd = RandomStateDicts.decoder(pre, 2, true, 307);
        Tensor lkp = padding(b, l);
        w.write(
                "decoder_pre_gelu_causal",
                map(
                        "module",
                        "TransformerDecoder",
                        "num_layers",
                        2L,
                        "norm",
                        true,
                        "decoder_layer",
                        layerKwargs(pre),
                        "forward",
                        map("tgt_mask", "float", "tgt_is_causal", true, "memory_key_padding_mask", "bool")),
                decSd,
                map("tgt", tgt, "memory", x, "tgt_mask", tm, "memory_key_padding_mask", lkp),
                map(
                        "output",
                        RefTransformer.decoder(
                                        decSd,
                                        "",
                                        pre,
                                        2,
                                        true,
                                        tgt,
                                        x,
                                        Mask.additive(tm),
                                        null,
                                        null,
                                        Mask.bool(lkp),
                                        true)
                                .output()));

        TransformerConfig tc = new TransformerConfig(2, 2, post);
        var tsd = RandomStateDicts.transformer(tc, 308);
        Tensor src = rand(309, b, s, 16);
        Tensor skp = padding(b, s);
        Map<String, Object> tcfg = with(
                layerKwargs(post),
                "module",
                "Transformer",
                "num_encoder_layers",
                2L,
                "num_decoder_layers",
                2L,
                "forward",
                map(
                        "tgt_mask",
                        "float",
                        "tgt_is_causal",
                        true,
                        "src_key_padding_mask",
                        "bool",
                        "tgt_key_padding_mask",
                        "bool",
                        "memory_key_padding_mask",
                        "bool"));
        var tr = RefTransformer.transformer(
                tsd,
                tc,
                src,
                tgt,
                null,
                Mask.additive(tm),
                null,
                false,
                true,
                Mask.bool(skp),
                Mask.bool(tkp),
                Mask.bool(skp));
        w.write(
                "transformer_post_relu",
                tcfg,
                tsd,
                map(
                        "src",
                        src,
                        "tgt",
                        tgt,
                        "tgt_mask",
                        tm,
                        "src_key_padding_mask",
                        skp,
                        "tgt_key_padding_mask",
                        tkp,
                        "memory_key_padding_mask",
                        skp),
                map("output", tr.output()));
    }
}
