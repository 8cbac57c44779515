package io.attn.reference.layers;

import io.attn.reference.layers.RefAttention.MhaResult;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Double-precision reference for {@code nn.TransformerEncoderLayer}, {@code nn.TransformerDecoderLayer},
 * {@code nn.TransformerEncoder}, {@code nn.TransformerDecoder} and {@code nn.Transformer} ({@code batch_first=True},
 * eval mode: dropout is the identity), following PyTorch's math ("slow") path.
 *
 * <p>Masks follow {@link RefAttention}; a null {@link Mask} means none. Attention weights are not part of PyTorch's
 * layer outputs, but the engine exposes them, so every layer result carries the weights of each attention block,
 * averaged over heads (B,L,S) and per head (B,H,L,S).
 *
 * <p>Known difference from PyTorch: with {@code enable_nested_tensor=True} (its default) and a key-padding mask,
 * {@code nn.TransformerEncoder}'s fast path returns 0 at padded query positions; this reference (like PyTorch's math
 * path) computes them normally.
 */
public final class RefTransformer {
    private RefTransformer() {}

    /** Encoder layer output (B,L,E) and its self-attention weights, averaged (B,L,L) and per head (B,H,L,L). */
    public record EncoderLayerResult(DTensor output, DTensor selfAttnWeights, DTensor selfAttnHeadWeights) {}

    /** Decoder layer output (B,T,E), self-attention weights (B,T,T)/(B,H,T,T), cross weights (B,T,S)/(B,H,T,S). */
    public record DecoderLayerResult(
            DTensor output,
            DTensor selfAttnWeights,
            DTensor selfAttnHeadWeights,
            DTensor crossAttnWeights,
            DTensor crossAttnHeadWeights) {}

    /** Encoder stack output (after the final norm, if any) and each layer's result. */
    public record EncoderResult(DTensor output, List<EncoderLayerResult> layers) {}

    /** Decoder stack output (after the final norm, if any) and each layer's result. */
    public record DecoderResult(DTensor output, List<DecoderLayerResult> layers) {}

    /** nn.Transformer output (B,T,E) = {@code decoder.output()}; {@code encoder.output()} is the memory. */
    public record TransformerResult(DTensor output, EncoderResult encoder, DecoderResult decoder) {}

    /**
     * {@code nn.TransformerEncoderLayer} forward. Names under {@code prefix}: {@code self_attn.*},
     * {@code linear1.weight} (F,E), {@code linear1.bias}, {@code linear2.weight} (E,F), {@code linear2.bias},
     * {@code norm1.weight/bias}, {@code norm2.weight/bias} (biases absent when bias=False).
     *
     * <p>Post-norm: {@code x = norm1(x + sa(x)); x = norm2(x + ff(x))}. Pre-norm: {@code x = x + sa(norm1(x)); x = x +
     * ff(norm2(x))}, with {@code ff(x) = linear2(activation(linear1(x)))}.
     *
     * @param src (B,L,E)
     * @param srcMask null, (L,S) or (B*nhead,L,S)
     * @param srcKeyPaddingMask null or (B,L)
     */
    public static EncoderLayerResult encoderLayer(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            Tensor src,
            Mask srcMask,
            Mask srcKeyPaddingMask,
            boolean isCausal) {
        return encoderLayer(sd, prefix, cfg, DTensor.of(src), srcMask, srcKeyPaddingMask, isCausal);
    }

    /** As {@link #encoderLayer(Map, String, LayerConfig, Tensor, Mask, Mask, boolean)} on a double input. */
    public static EncoderLayerResult encoderLayer(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            DTensor x,
            Mask srcMask,
            Mask srcKeyPaddingMask,
            boolean isCausal) {
        MhaResult sa;
        if (cfg.normFirst()) {
            DTensor h = norm(sd, prefix + "norm1.", cfg, x);
            sa = attention(sd, prefix + "self_attn.", cfg, h, h, srcMask, srcKeyPaddingMask, isCausal);
            x = RefMath.add(x, sa.output());
            x = RefMath.add(x, feedForward(sd, prefix, cfg, norm(sd, prefix + "norm2.", cfg, x)));
        } else {
            sa = attention(sd, prefix + "self_attn.", cfg, x, x, srcMask, srcKeyPaddingMask, isCausal);
            x = norm(sd, prefix + "norm1.", cfg, RefMath.add(x, sa.output()));
            x = norm(sd, prefix + "norm2.", cfg, RefMath.add(x, feedForward(sd, prefix, cfg, x)));
        }
        return new EncoderLayerResult(x, sa.weights(), sa.headWeights());
    }

    /**
     * {@code nn.TransformerDecoderLayer} forward. Names under {@code prefix}: {@code self_attn.*},
     * {@code multihead_attn.*} (query from the decoder, key = value = memory, which is not normalised here),
     * {@code linear1/2.*}, {@code norm1/2/3.*}.
     *
     * <p>Post-norm: {@code x = norm1(x + sa(x)); x = norm2(x + mha(x, mem)); x = norm3(x + ff(x))}. Pre-norm:
     * {@code x = x + sa(norm1(x)); x = x + mha(norm2(x), mem); x = x + ff(norm3(x))}.
     *
     * @param tgt (B,T,E)
     * @param memory (B,S,E)
     * @param tgtMask null, (T,T) or (B*nhead,T,T)
     * @param memoryMask null, (T,S) or (B*nhead,T,S)
     * @param tgtKeyPadding null or (B,T)
     * @param memoryKeyPadding null or (B,S)
     */
    public static DecoderLayerResult decoderLayer(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            Tensor tgt,
            Tensor memory,
            Mask tgtMask,
            Mask memoryMask,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding,
            boolean tgtIsCausal) {
        return decoderLayer(
                sd,
                prefix,
                cfg,
                DTensor.of(tgt),
                DTensor.of(memory),
                tgtMask,
                memoryMask,
                tgtKeyPadding,
                memoryKeyPadding,
                tgtIsCausal,
                false);
    }

    /**
     * As the Tensor overload, on double inputs; {@code memoryIsCausal} adds the causal mask {@code triu(ones(T,S),1)}
     * to the cross-attention (PyTorch's {@code memory_is_causal}).
     */
    public static DecoderLayerResult decoderLayer(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            DTensor x,
            DTensor memory,
            Mask tgtMask,
            Mask memoryMask,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding,
            boolean tgtIsCausal,
            boolean memoryIsCausal) {
        MhaResult sa;
        MhaResult ca;
        if (cfg.normFirst()) {
            DTensor h = norm(sd, prefix + "norm1.", cfg, x);
            sa = attention(sd, prefix + "self_attn.", cfg, h, h, tgtMask, tgtKeyPadding, tgtIsCausal);
            x = RefMath.add(x, sa.output());
            h = norm(sd, prefix + "norm2.", cfg, x);
            ca = attention(
                    sd, prefix + "multihead_attn.", cfg, h, memory, memoryMask, memoryKeyPadding, memoryIsCausal);
            x = RefMath.add(x, ca.output());
            x = RefMath.add(x, feedForward(sd, prefix, cfg, norm(sd, prefix + "norm3.", cfg, x)));
        } else {
            sa = attention(sd, prefix + "self_attn.", cfg, x, x, tgtMask, tgtKeyPadding, tgtIsCausal);
            x = norm(sd, prefix + "norm1.", cfg, RefMath.add(x, sa.output()));
            ca = attention(
                    sd, prefix + "multihead_attn.", cfg, x, memory, memoryMask, memoryKeyPadding, memoryIsCausal);
            x = norm(sd, prefix + "norm2.", cfg, RefMath.add(x, ca.output()));
            x = norm(sd, prefix + "norm3.", cfg, RefMath.add(x, feedForward(sd, prefix, cfg, x)));
        }
        return new DecoderLayerResult(x, sa.weights(), sa.headWeights(), ca.weights(), ca.headWeights());
    }

    /**
     * {@code nn.TransformerEncoder}: layers {@code prefix + "layers.N."} for N in [0, numLayers), each given the same
     * mask, key padding and is_causal, then {@code prefix + "norm."} when {@code finalNorm}.
     */
    public static EncoderResult encoder(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            int numLayers,
            boolean finalNorm,
            Tensor src,
            Mask mask,
            Mask srcKeyPadding,
            boolean isCausal) {
        DTensor x = DTensor.of(src);
        List<EncoderLayerResult> layers = new ArrayList<>();
        for (int n = 0; n < numLayers; n++) {
            EncoderLayerResult r =
                    encoderLayer(sd, prefix + "layers." + n + ".", cfg, x, mask, srcKeyPadding, isCausal);
            layers.add(r);
            x = r.output();
        }
        if (finalNorm) x = norm(sd, prefix + "norm.", cfg, x);
        return new EncoderResult(x, List.copyOf(layers));
    }

    /**
     * {@code nn.TransformerDecoder}: layers {@code prefix + "layers.N."}, each given the same memory and masks, then
     * {@code prefix + "norm."} when {@code finalNorm}.
     */
    public static DecoderResult decoder(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            int numLayers,
            boolean finalNorm,
            Tensor tgt,
            Tensor memory,
            Mask tgtMask,
            Mask memoryMask,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding,
            boolean tgtIsCausal) {
        return decoder(
                sd,
                prefix,
                cfg,
                numLayers,
                finalNorm,
                DTensor.of(tgt),
                DTensor.of(memory),
                tgtMask,
                memoryMask,
                tgtKeyPadding,
                memoryKeyPadding,
                tgtIsCausal);
    }

    /** As the Tensor overload, on double inputs (the memory may come from {@link #encoder}). */
    public static DecoderResult decoder(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            int numLayers,
            boolean finalNorm,
            DTensor x,
            DTensor memory,
            Mask tgtMask,
            Mask memoryMask,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding,
            boolean tgtIsCausal) {
        List<DecoderLayerResult> layers = new ArrayList<>();
        for (int n = 0; n < numLayers; n++) {
            DecoderLayerResult r = decoderLayer(
                    sd,
                    prefix + "layers." + n + ".",
                    cfg,
                    x,
                    memory,
                    tgtMask,
                    memoryMask,
                    tgtKeyPadding,
                    memoryKeyPadding,
                    tgtIsCausal,
                    false);
            layers.add(r);
            x = r.output();
        }
        if (finalNorm) x = norm(sd, prefix + "norm.", cfg, x);
        return new DecoderResult(x, List.copyOf(layers));
    }

    /**
     * {@code nn.Transformer(src, tgt, tgt_mask=causal if tgtIsCausal, src_key_padding_mask, tgt_key_padding_mask,
     * memory_key_padding_mask)}: encoder {@code encoder.layers.N.} + {@code encoder.norm.}, decoder
     * {@code decoder.layers.N.} + {@code decoder.norm.}. A null memoryKeyPadding means none (PyTorch's default; the
     * source padding is NOT reused for the memory unless passed here).
     */
    public static TransformerResult transformer(
            Map<String, Tensor> sd,
            TransformerConfig cfg,
            Tensor src,
            Tensor tgt,
            boolean tgtIsCausal,
            Mask srcKeyPadding,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding) {
        return transformer(
                sd,
                cfg,
                src,
                tgt,
                null,
                null,
                null,
                false,
                tgtIsCausal,
                srcKeyPadding,
                tgtKeyPadding,
                memoryKeyPadding);
    }

    /** The full {@code nn.Transformer.forward}, with src/tgt/memory attention masks and src_is_causal too. */
    public static TransformerResult transformer(
            Map<String, Tensor> sd,
            TransformerConfig cfg,
            Tensor src,
            Tensor tgt,
            Mask srcMask,
            Mask tgtMask,
            Mask memoryMask,
            boolean srcIsCausal,
            boolean tgtIsCausal,
            Mask srcKeyPadding,
            Mask tgtKeyPadding,
            Mask memoryKeyPadding) {
        LayerConfig lc = cfg.layer();
        EncoderResult enc =
                encoder(sd, "encoder.", lc, cfg.numEncoderLayers(), true, src, srcMask, srcKeyPadding, srcIsCausal);
        DecoderResult dec = decoder(
                sd,
                "decoder.",
                lc,
                cfg.numDecoderLayers(),
                true,
                DTensor.of(tgt),
                enc.output(),
                tgtMask,
                memoryMask,
                tgtKeyPadding,
                memoryKeyPadding,
                tgtIsCausal);
        return new TransformerResult(dec.output(), enc, dec);
    }

    private static MhaResult attention(
            Map<String, Tensor> sd,
            String prefix,
            LayerConfig cfg,
            DTensor q,
            DTensor kv,
            Mask attnMask,
            Mask keyPadding,
            boolean isCausal) {
        // the MHA reference treats its biases as optional; here the config decides, so check them against it
        StateDicts.bias(sd, prefix + "in_proj_bias", cfg.bias(), 3 * cfg.dModel());
        StateDicts.bias(sd, prefix + "out_proj.bias", cfg.bias(), cfg.dModel());
        return RefAttention.multiheadAttention(
                sd,
                prefix,
                cfg.dModel(),
                cfg.nhead(),
                q,
                kv,
                kv,
                keyPadding == null ? null : keyPadding.tensor(),
                keyPadding == null || keyPadding.isBool(),
                attnMask == null ? null : attnMask.tensor(),
                attnMask == null || attnMask.isBool(),
                isCausal,
                true,
                true);
    }

    private static DTensor feedForward(Map<String, Tensor> sd, String prefix, LayerConfig cfg, DTensor x) {
        int e = cfg.dModel(), f = cfg.dimFeedforward();
        Tensor w1 = StateDicts.require(sd, prefix + "linear1.weight", f, e);
        Tensor b1 = StateDicts.bias(sd, prefix + "linear1.bias", cfg.bias(), f);
        Tensor w2 = StateDicts.require(sd, prefix + "linear2.weight", e, f);
        Tensor b2 = StateDicts.bias(sd, prefix + "linear2.bias", cfg.bias(), e);
        DTensor h = RefMath.activation(RefMath.linear(x, w1, b1), cfg.activation());
        return RefMath.linear(h, w2, b2);
    }

    private static DTensor norm(Map<String, Tensor> sd, String prefix, LayerConfig cfg, DTensor x) {
        int e = cfg.dModel();
        Tensor w = StateDicts.require(sd, prefix + "weight", e);
        Tensor b = StateDicts.bias(sd, prefix + "bias", cfg.bias(), e);
        return RefMath.layerNorm(x, w, b, cfg.layerNormEps());
    }
}
