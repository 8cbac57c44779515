package io.attn.parity;

import io.attn.backend.Backend;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Request;
import io.attn.engine.internal.ModuleCalls;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.Mask;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefMath;
import io.attn.reference.layers.RefTransformer;
import io.attn.reference.layers.TransformerConfig;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Layer-level parity cases: every module kind run through {@link Model} against the independent double-precision
 * reference ({@code io.attn.reference.layers}, written from PyTorch's semantics without looking at the engine's
 * layers): post- and pre-norm, relu and gelu, bias on and off, each mask kind, self- and cross-attention, stacks,
 * Transformer, batched and unbatched, attention weights averaged and per head. Used by the JUnit ParityTest and
 * by {@code attn parity}.
 *
 * <p>Bound: relative Frobenius error {@code ||engine - ref|| / ||ref|| <= 1e-5}, for outputs and weights. Each fp32
 * GEMM/softmax/LayerNorm adds a relative error of a few ulp (~1e-7) times a growth factor that is small for these
 * widths (K <= 64 terms per dot product); the deepest graph here chains ~30 such ops, which stays well under 1e-5,
 * while a wrong mask, head split, norm order or activation gives errors of 1e-2 or more.
 */
public final class LayerCases {
    private LayerCases() {}

    /** The bound for outputs and weights: see the class comment. */
    public static final double BOUND = 1e-5;

    /** One case: a model, its inputs, and the reference's expected output and weights (by block name). */
    public record Case(
            String name, ModelConfig config, Map<String, Tensor> sd, Request in, Supplier<Expected> expected) {}

    public record Expected(DTensor output, Map<String, DTensor> weights) {}

    public static Tensor rand(long seed, int... dims) {
        return RandomStateDicts.uniform(seed, -1, 1, dims);
    }

    /** (B, S) key padding, 1 = padding: the last {@code pad[b]} keys of batch b. */
    static Tensor padding(int s, int... pad) {
        Tensor t = Tensor.zeros(pad.length, s);
        for (int b = 0; b < pad.length; b++) for (int j = s - pad[b]; j < s; j++) t.set(1f, b, j);
        return t;
    }

    static ModelConfig mhaConfig(int e, int h, boolean bias) {
        return new ModelConfig(ModelConfig.Kind.MultiheadAttention, null, e, h, bias, 0, false, 0, 0);
    }

    public static io.attn.nn.LayerConfig engineLayer(LayerConfig c) {
        return new io.attn.nn.LayerConfig(
                c.dModel(),
                c.nhead(),
                c.dimFeedforward(),
                c.activation(),
                (float) c.layerNormEps(),
                c.normFirst(),
                c.bias());
    }

    static ModelConfig layerConfig(ModelConfig.Kind kind, LayerConfig c, int layers, boolean finalNorm) {
        return new ModelConfig(kind, engineLayer(c), 0, 0, true, layers, finalNorm, 0, 0);
    }

    /** Every case, in a fixed order. */
    public static List<Case> cases() {
        List<Case> cs = new ArrayList<>();
        int e = 12, h = 3;
        // ---- MultiheadAttention: self and cross, masks, weights, bias
        for (boolean bias : new boolean[] {true, false}) {
            var sd = RandomStateDicts.multiheadAttention(e, bias, 11);
            Tensor x = rand(1, 2, 7, e);
            cs.add(mha(
                    "mha self bias=" + bias,
                    e,
                    h,
                    bias,
                    sd,
                    Request.of(x).withAttentionWeights(AttentionWeights.AVERAGED),
                    x,
                    x,
                    null,
                    null,
                    false,
                    false));
        }
        var sd = RandomStateDicts.multiheadAttention(e, true, 12);
        Tensor q = rand(2, 3, 5, e), mem = rand(3, 3, 9, e);
        Tensor kp = padding(9, 0, 3, 8);
        cs.add(mha(
                "mha cross + key padding, per head",
                e,
                h,
                true,
                sd,
                Request.of(q).withMemory(mem).withKeyPaddingMask(kp).withAttentionWeights(AttentionWeights.PER_HEAD),
                q,
                mem,
                kp,
                null,
                false,
                false));
        cs.add(mha(
                "mha cross + key padding, fused",
                e,
                h,
                true,
                sd,
                Request.of(q).withMemory(mem).withKeyPaddingMask(kp),
                q,
                mem,
                kp,
                null,
                false,
                false));
        Tensor x = rand(4, 2, 6, e);
        cs.add(mha("mha causal, fused", e, h, true, sd, Request.of(x).withCausal(true), x, x, null, null, false, true));
        cs.add(mha(
                "mha causal, averaged",
                e,
                h,
                true,
                sd,
                Request.of(x).withCausal(true).withAttentionWeights(AttentionWeights.AVERAGED),
                x,
                x,
                null,
                null,
                false,
                true));
        Tensor boolMask = Tensor.zeros(6, 6);
        for (int i = 0; i < 6; i++) boolMask.set(1f, i, (i * 5 + 1) % 6);
        cs.add(mha(
                "mha bool attn_mask (L,S)",
                e,
                h,
                true,
                sd,
                Request.of(x).withAttnMask(boolMask, true).withAttentionWeights(AttentionWeights.PER_HEAD),
                x,
                x,
                null,
                boolMask,
                true,
                false));
        Tensor add3 = rand(5, 2 * h, 6, 6);
        add3.set(Float.NEGATIVE_INFINITY, 1, 2, 3);
        cs.add(mha(
                "mha additive attn_mask (B*H,L,S) + causal",
                e,
                h,
                true,
                sd,
                Request.of(x)
                        .withAttnMask(add3, false)
                        .withCausal(true)
                        .withAttentionWeights(AttentionWeights.AVERAGED),
                x,
                x,
                null,
                add3,
                false,
                true));
        Tensor allPad = padding(6, 0, 6); // batch 1: every key is padding -> zero rows
        cs.add(mha(
                "mha fully masked batch item (zeros, not NaN)",
                e,
                h,
                true,
                sd,
                Request.of(x).withKeyPaddingMask(allPad).withAttentionWeights(AttentionWeights.AVERAGED),
                x,
                x,
                allPad,
                null,
                false,
                false));
        cs.add(mha(
                "mha fully masked batch item, fused",
                e,
                h,
                true,
                sd,
                Request.of(x).withKeyPaddingMask(allPad),
                x,
                x,
                allPad,
                null,
                false,
                false));
        Tensor unb = rand(6, 5, e);
        cs.add(new Case(
                "mha unbatched (L,E)",
                mhaConfig(e, h, true),
                sd,
                Request.of(unb).withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    var r = RefAttention.multiheadAttention(
                            sd,
                            "",
                            e,
                            h,
                            unb.reshape(1, 5, e),
                            unb.reshape(1, 5, e),
                            unb.reshape(1, 5, e),
                            null,
                            null,
                            false,
                            false,
                            true,
                            true);
                    return new Expected(
                            r.output().reshape(5, e), Map.of("attn", r.weights().reshape(5, 5)));
                }));

        // ---- encoder / decoder layers: post/pre norm, relu/gelu, bias
        for (boolean normFirst : new boolean[] {false, true})
            for (String act : new String[] {"relu", "gelu"}) {
                LayerConfig c =
                        LayerConfig.of(16, 4, 24).withNormFirst(normFirst).withActivation(act);
                var esd = RandomStateDicts.encoderLayer(c, 21);
                Tensor src = rand(7, 2, 6, 16);
                Tensor skp = padding(6, 1, 0);
                String tag = (normFirst ? "pre-norm " : "post-norm ") + act;
                cs.add(new Case(
                        "encoder layer " + tag + " + key padding",
                        layerConfig(ModelConfig.Kind.TransformerEncoderLayer, c, 0, false),
                        esd,
                        Request.of(src).withKeyPaddingMask(skp).withAttentionWeights(AttentionWeights.AVERAGED),
                        () -> {
                            var r = RefTransformer.encoderLayer(esd, "", c, src, null, Mask.bool(skp), false);
                            return new Expected(r.output(), Map.of("self_attn", r.selfAttnWeights()));
                        }));
                var dsd = RandomStateDicts.decoderLayer(c, 22);
                Tensor tgt = rand(8, 2, 5, 16), memory = rand(9, 2, 7, 16);
                Tensor mkp = padding(7, 2, 0);
                cs.add(new Case(
                        "decoder layer " + tag + " causal + memory padding",
                        layerConfig(ModelConfig.Kind.TransformerDecoderLayer, c, 0, false),
                        dsd,
                        Request.of(tgt)
                                .withMemory(memory)
                                .withMemoryKeyPaddingMask(mkp, true)
                                .withCausal(true)
                                .withAttentionWeights(AttentionWeights.PER_HEAD),
                        () -> {
                            var r = RefTransformer.decoderLayer(
                                    dsd, "", c, tgt, memory, null, null, null, Mask.bool(mkp), true);
                            Map<String, DTensor> w = new LinkedHashMap<>();
                            w.put("self_attn", r.selfAttnHeadWeights());
                            w.put("multihead_attn", r.crossAttnHeadWeights());
                            return new Expected(r.output(), w);
                        }));
            }
        LayerConfig nb = LayerConfig.of(16, 2, 20).withBias(false).withActivation("gelu");
        var nbsd = RandomStateDicts.encoderLayer(nb, 23);
        Tensor nbx = rand(10, 1, 9, 16);
        cs.add(new Case(
                "encoder layer bias=false, fused, causal",
                layerConfig(ModelConfig.Kind.TransformerEncoderLayer, nb, 0, false),
                nbsd,
                Request.of(nbx).withCausal(true),
                () -> new Expected(
                        RefTransformer.encoderLayer(nbsd, "", nb, nbx, null, null, true)
                                .output(),
                        Map.of())));

        // ---- stacks and Transformer
        LayerConfig sc = LayerConfig.of(16, 4, 32).withActivation("gelu");
        var encSd = RandomStateDicts.encoder(sc, 2, true, 31);
        Tensor es = rand(11, 2, 8, 16);
        Tensor ekp = padding(8, 0, 2);
        cs.add(new Case(
                "encoder stack (2 layers + final norm)",
                layerConfig(ModelConfig.Kind.TransformerEncoder, sc, 2, true),
                encSd,
                Request.of(es).withKeyPaddingMask(ekp).withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    var r = RefTransformer.encoder(encSd, "", sc, 2, true, es, null, Mask.bool(ekp), false);
                    Map<String, DTensor> w = new LinkedHashMap<>();
                    for (int i = 0; i < 2; i++)
                        w.put("layers." + i + ".self_attn", r.layers().get(i).selfAttnWeights());
                    return new Expected(r.output(), w);
                }));
        LayerConfig pc = LayerConfig.of(16, 4, 32).withNormFirst(true);
        var decSd = RandomStateDicts.decoder(pc, 2, false, 32);
        Tensor dt = rand(12, 2, 6, 16), dm = rand(13, 2, 10, 16);
        cs.add(new Case(
                "decoder stack pre-norm, no final norm, fused",
                layerConfig(ModelConfig.Kind.TransformerDecoder, pc, 2, false),
                decSd,
                Request.of(dt).withMemory(dm).withCausal(true),
                () -> new Expected(
                        RefTransformer.decoder(decSd, "", pc, 2, false, dt, dm, null, null, null, null, true)
                                .output(),
                        Map.of())));
        TransformerConfig tc = new TransformerConfig(2, 2, LayerConfig.of(16, 4, 32));
        var tSd = RandomStateDicts.transformer(tc, 33);
        Tensor src = rand(14, 2, 7, 16), tgt = rand(15, 2, 5, 16);
        Tensor tkp = padding(7, 0, 3);
        ModelConfig tmc =
                new ModelConfig(ModelConfig.Kind.Transformer, engineLayer(tc.layer()), 0, 0, true, 0, true, 2, 2);
        cs.add(new Case(
                "Transformer 2+2, causal tgt, src and memory padding",
                tmc,
                tSd,
                Request.of(src)
                        .withTarget(tgt)
                        .withKeyPaddingMask(tkp)
                        .withMemoryKeyPaddingMask(tkp, true)
                        .withCausal(true)
                        .withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    var r = RefTransformer.transformer(tSd, tc, src, tgt, true, Mask.bool(tkp), null, Mask.bool(tkp));
                    Map<String, DTensor> w = new LinkedHashMap<>();
                    for (int i = 0; i < 2; i++)
                        w.put(
                                "encoder.layers." + i + ".self_attn",
                                r.encoder().layers().get(i).selfAttnWeights());
                    for (int i = 0; i < 2; i++) {
                        w.put(
                                "decoder.layers." + i + ".self_attn",
                                r.decoder().layers().get(i).selfAttnWeights());
                        w.put(
                                "decoder.layers." + i + ".multihead_attn",
                                r.decoder().layers().get(i).crossAttnWeights());
                    }
                    return new Expected(r.output(), w);
                }));

        // ---- PyTorch's other forward arguments: float key-padding masks (added to the scores, not read as bool),
        // tgt/memory masks and paddings, memory_is_causal, src_mask for Transformer; and batch_first=False (inputs and
        // outputs (L, B, E), masks and weights as batch-first)
        var fsd = RandomStateDicts.multiheadAttention(e, true, 14);
        Tensor fq = rand(17, 2, 4, e), fmem = rand(18, 2, 7, e);
        Tensor fkp = rand(19, 2, 7); // float: added to the scores, as PyTorch does (0/1 would not mask anything out)
        cs.add(new Case(
                "mha batch_first=false cross + float key padding, averaged",
                mhaConfig(e, h, true).withBatchFirst(false),
                fsd,
                Request.of(transpose01(fq))
                        .withMemory(transpose01(fmem))
                        .withKeyPaddingMask(fkp, false)
                        .withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    var r = RefAttention.multiheadAttention(
                            fsd,
                            "",
                            e,
                            h,
                            DTensor.of(fq),
                            DTensor.of(fmem),
                            DTensor.of(fmem),
                            fkp,
                            false,
                            null,
                            false,
                            false,
                            true,
                            true);
                    return new Expected(transpose01(r.output()), Map.of("attn", r.weights()));
                }));
        LayerConfig bf = LayerConfig.of(16, 4, 24).withActivation("gelu");
        var bfsd = RandomStateDicts.encoderLayer(bf, 24);
        Tensor bfx = rand(20, 3, 5, 16);
        Tensor bfMask = rand(21, 3 * 4, 5, 5);
        Tensor bfkp = padding(5, 0, 2, 1);
        cs.add(new Case(
                "encoder layer batch_first=false, float src_mask (B*H,L,S) + bool padding + causal",
                layerConfig(ModelConfig.Kind.TransformerEncoderLayer, bf, 0, false)
                        .withBatchFirst(false),
                bfsd,
                Request.of(transpose01(bfx))
                        .withAttnMask(bfMask, false)
                        .withKeyPaddingMask(bfkp)
                        .withCausal(true)
                        .withAttentionWeights(AttentionWeights.PER_HEAD),
                () -> {
                    var r = RefTransformer.encoderLayer(
                            bfsd, "", bf, bfx, Mask.additive(bfMask), Mask.bool(bfkp), true);
                    return new Expected(transpose01(r.output()), Map.of("self_attn", r.selfAttnHeadWeights()));
                }));
        LayerConfig dc = LayerConfig.of(16, 4, 24).withNormFirst(true);
        var dmsd = RandomStateDicts.decoderLayer(dc, 25);
        Tensor dmt = rand(22, 2, 5, 16), dmm = rand(23, 2, 6, 16);
        Tensor tgtMask = Tensor.zeros(5, 5), memMask = rand(24, 2 * 4, 5, 6), tgtKp = rand(25, 2, 5);
        for (int i = 0; i < 5; i++) tgtMask.set(1f, i, (i + 2) % 5);
        Tensor memKp = padding(6, 1, 3);
        cs.add(new Case(
                "decoder layer tgt_mask bool + float tgt padding + float memory_mask + memory padding + memory causal",
                layerConfig(ModelConfig.Kind.TransformerDecoderLayer, dc, 0, false),
                dmsd,
                Request.of(dmt)
                        .withMemory(dmm)
                        .withTgtMask(tgtMask, true)
                        .withTgtKeyPaddingMask(tgtKp, false)
                        .withMemoryMask(memMask, false)
                        .withMemoryKeyPaddingMask(memKp, true)
                        .withMemoryCausal(true)
                        .withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    var r = RefTransformer.decoderLayer(
                            dmsd,
                            "",
                            dc,
                            DTensor.of(dmt),
                            DTensor.of(dmm),
                            Mask.bool(tgtMask),
                            Mask.additive(memMask),
                            Mask.additive(tgtKp),
                            Mask.bool(memKp),
                            false,
                            true);
                    Map<String, DTensor> w = new LinkedHashMap<>();
                    w.put("self_attn", r.selfAttnWeights());
                    w.put("multihead_attn", r.crossAttnWeights());
                    return new Expected(r.output(), w);
                }));
        TransformerConfig btc =
                new TransformerConfig(1, 2, LayerConfig.of(16, 4, 32).withActivation("gelu"));
        var btSd = RandomStateDicts.transformer(btc, 34);
        Tensor bs = rand(26, 2, 6, 16), bt = rand(27, 2, 4, 16);
        Tensor srcMask = rand(28, 6, 6), bskp = padding(6, 2, 0), btkp = padding(4, 0, 1);
        ModelConfig btmc = new ModelConfig(
                        ModelConfig.Kind.Transformer, engineLayer(btc.layer()), 0, 0, true, 0, true, 1, 2)
                .withBatchFirst(false);
        cs.add(new Case(
                "Transformer 1+2 batch_first=false, float src_mask, every padding, causal tgt",
                btmc,
                btSd,
                Request.of(transpose01(bs))
                        .withTarget(transpose01(bt))
                        .withAttnMask(srcMask, false)
                        .withKeyPaddingMask(bskp)
                        .withTgtKeyPaddingMask(btkp, true)
                        .withMemoryKeyPaddingMask(bskp, true)
                        .withCausal(true),
                () -> new Expected(
                        transpose01(RefTransformer.transformer(
                                        btSd,
                                        btc,
                                        bs,
                                        bt,
                                        Mask.additive(srcMask),
                                        null,
                                        null,
                                        false,
                                        true,
                                        Mask.bool(bskp),
                                        Mask.bool(btkp),
                                        Mask.bool(bskp))
                                .output()),
                        Map.of())));

        // ---- Hugging Face BertModel: token ids in, a right-padded batch with the padding masked out of the keys,
        // each activation; padded positions are compared too (transformers computes them the same way)
        for (String act : new String[] {"gelu", "gelu_new", "relu"}) {
            int vocab = 50, hid = 16, layers = 2, heads = 4, ffn = 24, maxPos = 12;
            Map<String, Tensor> bsd = RandomStateDicts.bert(vocab, hid, layers, ffn, maxPos, 2, 60 + act.length());
            int[][] seqs = {{2, 7, 9, 31, 4, 3}, {2, 11, 3}, {2, 45, 46, 47, 3}};
            int len = 6;
            Tensor ids = Tensor.zeros(seqs.length, len);
            Tensor pad = Tensor.zeros(seqs.length, len);
            for (int b = 0; b < seqs.length; b++)
                for (int j = 0; j < len; j++) {
                    if (j < seqs[b].length) ids.set(seqs[b][j], b, j);
                    else pad.set(1f, b, j);
                }
            ModelConfig bc = ModelConfig.encoder(
                    io.attn.nn.EncoderConfig.bert(vocab, hid, layers, heads, ffn, act, 1e-12f, maxPos, 2));
            AttentionWeights aw = act.equals("gelu") ? AttentionWeights.PER_HEAD : AttentionWeights.NONE;
            cs.add(new Case(
                    "BertModel " + act + ", padded batch" + (aw == AttentionWeights.NONE ? "" : ", weights per head"),
                    bc,
                    bsd,
                    Request.of(ids).withKeyPaddingMask(pad).withAttentionWeights(aw),
                    () -> {
                        double[] out = new double[seqs.length * len * hid];
                        for (int b = 0; b < seqs.length; b++) {
                            int[] row = new int[len];
                            System.arraycopy(seqs[b], 0, row, 0, seqs[b].length);
                            DTensor y = io.attn.reference.layers.RefBert.lastHiddenState(
                                    bsd, row, seqs[b].length, layers, heads, 1e-12, act);
                            System.arraycopy(y.data(), 0, out, b * len * hid, len * hid);
                        }
                        Map<String, DTensor> w = new LinkedHashMap<>();
                        if (aw != AttentionWeights.NONE)
                            for (int l = 0; l < layers; l++)
                                w.put(
                                        "encoder.layer." + l + ".attention",
                                        io.attn.reference.layers.RefBert.attentionWeights(
                                                bsd, seqs, len, l, layers, heads, 1e-12, act));
                        return new Expected(new DTensor(new int[] {seqs.length, len, hid}, out), w);
                    }));
        }

        // ---- BertModel on a ragged batch: the same three sequences laid one after another, no padding; each must be
        // what the sequence alone gives
        {
            int vocab = 50, hid = 16, layers = 2, heads = 4, ffn = 24, maxPos = 12;
            Map<String, Tensor> bsd = RandomStateDicts.bert(vocab, hid, layers, ffn, maxPos, 2, 71);
            int[][] seqs = {{2, 7, 9, 31, 4, 3}, {2, 11, 3}, {2}, {2, 45, 46, 47, 3}};
            int total = Arrays.stream(seqs).mapToInt(sq -> sq.length).sum();
            Tensor ids = Tensor.zeros(1, total);
            int[] lengths = new int[seqs.length];
            for (int b = 0, at = 0; b < seqs.length; at += seqs[b++].length) {
                lengths[b] = seqs[b].length;
                for (int j = 0; j < seqs[b].length; j++) ids.set(seqs[b][j], 0, at + j);
            }
            ModelConfig bc = ModelConfig.encoder(
                    io.attn.nn.EncoderConfig.bert(vocab, hid, layers, heads, ffn, "gelu", 1e-12f, maxPos, 2));
            cs.add(new Case(
                    "BertModel gelu, ragged batch (sequences of 6, 3, 1, 5)",
                    bc,
                    bsd,
                    Request.of(ids).withSequenceLengths(lengths),
                    () -> {
                        double[] out = new double[total * hid];
                        for (int b = 0, at = 0; b < seqs.length; at += seqs[b++].length) {
                            DTensor y = io.attn.reference.layers.RefBert.lastHiddenState(
                                    bsd, seqs[b], seqs[b].length, layers, heads, 1e-12, "gelu");
                            System.arraycopy(y.data(), 0, out, at * hid, seqs[b].length * hid);
                        }
                        return new Expected(new DTensor(new int[] {1, total, hid}, out), Map.of());
                    }));
        }

        // ---- the tutorials' single-head SelfAttention: Linear q/k/v, softmax(QK^T/sqrt(E))V over the keys
        int se = 8;
        Map<String, Tensor> ssd = new LinkedHashMap<>();
        for (String n : new String[] {"query", "key", "value"}) {
            ssd.put(n + ".weight", rand(40 + n.length(), se, se));
            ssd.put(n + ".bias", rand(50 + n.length(), se));
        }
        Tensor sx = rand(16, 2, 5, se);
        cs.add(new Case(
                "SelfAttention (seed 001, single head)",
                new ModelConfig(ModelConfig.Kind.SelfAttention, null, se, 1, true, 0, false, 0, 0),
                ssd,
                Request.of(sx).withAttentionWeights(AttentionWeights.AVERAGED),
                () -> {
                    DTensor qq = RefMath.linear(DTensor.of(sx), ssd.get("query.weight"), ssd.get("query.bias"));
                    DTensor kk = RefMath.linear(DTensor.of(sx), ssd.get("key.weight"), ssd.get("key.bias"));
                    DTensor vv = RefMath.linear(DTensor.of(sx), ssd.get("value.weight"), ssd.get("value.bias"));
                    var r = RefAttention.sdpa(
                            qq.toTensor().reshape(2, 1, 5, se),
                            kk.toTensor().reshape(2, 1, 5, se),
                            vv.toTensor().reshape(2, 1, 5, se),
                            null,
                            false,
                            false,
                            null);
                    return new Expected(
                            r.output().reshape(2, 5, se),
                            Map.of("self_attn", r.weights().reshape(2, 5, 5)));
                }));
        return cs;
    }

    static Case mha(
            String name,
            int e,
            int h,
            boolean bias,
            Map<String, Tensor> sd,
            Request in,
            Tensor q,
            Tensor kv,
            Tensor kp,
            Tensor am,
            boolean amBool,
            boolean causal) {
        boolean want = in.attentionWeights() != AttentionWeights.NONE;
        boolean avg = in.attentionWeights() == AttentionWeights.AVERAGED;
        return new Case(name, mhaConfig(e, h, bias), sd, in, () -> {
            var r = RefAttention.multiheadAttention(sd, "", e, h, q, kv, kv, kp, am, amBool, causal, want, avg);
            return new Expected(r.output(), want ? Map.of("attn", r.weights()) : Map.of());
        });
    }

    /**
     * {@code (P, Q, E) -> (Q, P, E)}, PyTorch's {@code transpose(0, 1)} (its own inverse): a batch-first tensor as a
     * {@code batch_first=False} module takes it, and such a module's output back.
     */
    static Tensor transpose01(Tensor t) {
        int b = t.dim(0), l = t.dim(1), e = t.dim(2);
        Tensor out = Tensor.zeros(l, b, e);
        for (int i = 0; i < b; i++)
            for (int j = 0; j < l; j++) System.arraycopy(t.data(), (i * l + j) * e, out.data(), (j * b + i) * e, e);
        return out;
    }

    /** {@link #transpose01(Tensor)} for the reference's outputs. */
    static DTensor transpose01(DTensor t) {
        int b = t.dim(0), l = t.dim(1), e = t.dim(2);
        double[] out = new double[t.size()];
        for (int i = 0; i < b; i++)
            for (int j = 0; j < l; j++) System.arraycopy(t.data(), (i * l + j) * e, out, (j * b + i) * e, e);
        return new DTensor(new int[] {l, b, e}, out);
    }

    /** Relative Frobenius error; infinite for a shape mismatch or a NaN where the reference is finite. */
    public static double relErr(Tensor got, DTensor want) {
        if (!Arrays.equals(want.shape(), got.shape().dims())) return Double.POSITIVE_INFINITY;
        double num = 0, den = 0;
        for (int i = 0; i < got.size(); i++) {
            double d = got.data()[i] - want.data()[i];
            if (Double.isNaN(got.data()[i])) return Double.POSITIVE_INFINITY;
            num += d * d;
            den += want.data()[i] * want.data()[i];
        }
        return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
    }

    /** The outcome of one case on one backend: the worst relative error over the output and every weight block. */
    public record Result(Case layerCase, String backend, double relErr, boolean pass, String message) {}

    /**
     * Why {@code backend} cannot run case {@code c} by design, or null when it can: a ragged batch ({@link
     * Request#withSequenceLengths}) on a backend without the segmented attention (callers pad instead: {@code
     * AttnModel.supportsRaggedBatches}). Such a case is reported as skipped, never as passed.
     */
    public static String unsupported(Case c, Backend backend) {
        if (c.in().sequenceLengths() != null && !Model.supportsRaggedBatches(backend))
            return backend.name() + " runs no ragged batch (its callers pad the batch instead)";
        return null;
    }

    /** Runs one case on {@code backend} against {@link #BOUND}; never throws for an engine failure. */
    public static Result run(Case c, Backend backend) {
        return run(c, backend, BOUND);
    }

    /** Runs one case on {@code backend} against {@code bound} (a relative error); never throws for an engine failure. */
    public static Result run(Case c, Backend backend, double bound) {
        try (Model m = Model.load(c.config(), new StateDict(c.sd(), c.name()))) {
            Expected want = c.expected().get();
            io.attn.engine.Result got = ModuleCalls.run(m, backend, c.in());
            double worst = relErr(got.output(), want.output());
            String where = "output";
            if (!want.weights().keySet().equals(got.attentionWeights().keySet()))
                return new Result(
                        c,
                        backend.name(),
                        Double.NaN,
                        false,
                        "weight blocks " + got.attentionWeights().keySet() + ", expected "
                                + want.weights().keySet());
            for (var w : want.weights().entrySet()) {
                double e = relErr(got.attentionWeights().get(w.getKey()), w.getValue());
                if (!(e <= worst)) {
                    worst = e;
                    where = w.getKey() + " weights";
                }
            }
            boolean pass = worst <= bound;
            return new Result(
                    c, backend.name(), worst, pass, pass ? "ok" : where + ": relative error " + worst + " > " + bound);
        } catch (RuntimeException e) {
            return new Result(c, backend.name(), Double.NaN, false, "threw " + e);
        }
    }
}
