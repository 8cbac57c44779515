package io.attn.nn;

import io.attn.tensor.Tensor;

/**
 * The inputs of one model run. Shapes are batch-first {@code (B, L, E)}, or unbatched {@code (L, E)} (outputs are
 * then unbatched too).
 *
 * @param input the query ({@code MultiheadAttention}, {@code SelfAttention}), src (encoders, {@code Transformer}) or
 *     tgt (decoders)
 * @param memory key = value for {@code MultiheadAttention} cross-attention; the encoder output for decoders; null
 *     otherwise
 * @param target tgt for {@code Transformer}; null otherwise
 * @param keyPaddingMask {@code (B, S)} (or {@code (S)} unbatched), non-zero = padding; applies to the keys of
 *     self-attention in encoders and MHA, to the memory in decoders, and to both the encoder and the memory for {@code
 *     Transformer}; may be null
 * @param attnMask {@code (L, S)}, or {@code (B*H, L, S)} as {@code nn.MultiheadAttention} takes it; bool (non-zero
 *     masks out) when {@code attnMaskBool}, else added to the scores; may be null. Applies where {@code causal} does.
 * @param causal causal self-attention (the decoder's self-attention; the encoder's or MHA's when they are run alone)
 * @param weights which attention weights to return
 */
public record Inputs(
        Tensor input,
        Tensor memory,
        Tensor target,
        Tensor keyPaddingMask,
        Tensor attnMask,
        boolean attnMaskBool,
        boolean causal,
        Forward.Weights weights) {
    public Inputs {
        if (input == null) throw new IllegalArgumentException("input is required");
        if (weights == null) weights = Forward.Weights.NONE;
    }

    /** Just an input, no masks, no weights. */
    public static Inputs of(Tensor input) {
        return new Inputs(input, null, null, null, null, false, false, Forward.Weights.NONE);
    }

    public Inputs withMemory(Tensor m) {
        return new Inputs(input, m, target, keyPaddingMask, attnMask, attnMaskBool, causal, weights);
    }

    public Inputs withTarget(Tensor t) {
        return new Inputs(input, memory, t, keyPaddingMask, attnMask, attnMaskBool, causal, weights);
    }

    public Inputs withKeyPaddingMask(Tensor kp) {
        return new Inputs(input, memory, target, kp, attnMask, attnMaskBool, causal, weights);
    }

    public Inputs withAttnMask(Tensor mask, boolean bool) {
        return new Inputs(input, memory, target, keyPaddingMask, mask, bool, causal, weights);
    }

    public Inputs withCausal(boolean c) {
        return new Inputs(input, memory, target, keyPaddingMask, attnMask, attnMaskBool, c, weights);
    }

    public Inputs withWeights(Forward.Weights w) {
        return new Inputs(input, memory, target, keyPaddingMask, attnMask, attnMaskBool, causal, w);
    }
}
