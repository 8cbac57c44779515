package io.attn.engine;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.nio.FloatBuffer;

/**
 * The inputs of one general {@link AttnModel#run} call, for every module kind. Shapes are batch-first {@code (B, L, E)},
 * or unbatched {@code (L, E)} (outputs are then unbatched too). Build with {@code of(...)} and the {@code with...}
 * methods, each of which returns a new request.
 *
 * <ul>
 *   <li>{@code input}: the query ({@code MultiheadAttention}, {@code SelfAttention}), src (encoders, {@code
 *       Transformer}) or tgt (decoders).
 *   <li>{@code memory}: key = value for {@code MultiheadAttention} cross-attention; the encoder output for decoders.
 *   <li>{@code target}: tgt for {@code Transformer}.
 *   <li>{@code keyPaddingMask}: {@code (B, S)} ({@code (S)} unbatched), non-zero = padding: the keys of self-attention
 *       in encoders and MHA, the memory in decoders, both for {@code Transformer}.
 *   <li>{@code attnMask}: {@code (L, S)} or {@code (B*H, L, S)}; bool (non-zero masks out) or added to the scores.
 *   <li>{@code causal}: causal self-attention (the decoder's; the encoder's or MHA's when run alone).
 *   <li>{@code attentionWeights}: which weights to return (default none).
 * </ul>
 *
 * <p>A model whose input is token ids ({@code BertModel}) takes {@code input} ids {@code (B, L)} or {@code (L)}
 * (integral values stored as float) and an optional {@code keyPaddingMask} of the same shape, non-zero = padding.
 *
 * <p>Immutable and thread-safe; the tensors are not copied, so do not mutate their arrays while a call reads them.
 */
public final class Request {
    final Tensor input, memory, target, keyPaddingMask, attnMask;
    final boolean attnMaskBool, causal;
    final AttentionWeights weights;
    final int[] sequenceLengths;

    private Request(
            Tensor input,
            Tensor memory,
            Tensor target,
            Tensor keyPaddingMask,
            Tensor attnMask,
            boolean attnMaskBool,
            boolean causal,
            AttentionWeights weights,
            int[] sequenceLengths) {
        if (input == null) throw AttnException.badInput("a request needs an input tensor");
        this.sequenceLengths = sequenceLengths;
        this.input = input;
        this.memory = memory;
        this.target = target;
        this.keyPaddingMask = keyPaddingMask;
        this.attnMask = attnMask;
        this.attnMaskBool = attnMaskBool;
        this.causal = causal;
        this.weights = weights == null ? AttentionWeights.NONE : weights;
    }

    public static Request of(Tensor input) {
        return new Request(input, null, null, null, null, false, false, AttentionWeights.NONE, null);
    }

    /** {@code data} wrapped with {@code shape} (see {@link Tensors#of(float[], int...)}). */
    public static Request of(float[] data, int... shape) {
        return of(Tensors.of(data, shape));
    }

    /** {@code data} copied with {@code shape} (see {@link Tensors#of(FloatBuffer, int...)}). */
    public static Request of(FloatBuffer data, int... shape) {
        return of(Tensors.of(data, shape));
    }

    /** {@code data} copied with {@code shape} (see {@link Tensors#of(MemorySegment, int...)}). */
    public static Request of(MemorySegment data, int... shape) {
        return of(Tensors.of(data, shape));
    }

    public Request withMemory(Tensor m) {
        return new Request(input, m, target, keyPaddingMask, attnMask, attnMaskBool, causal, weights, sequenceLengths);
    }

    public Request withTarget(Tensor t) {
        return new Request(input, memory, t, keyPaddingMask, attnMask, attnMaskBool, causal, weights, sequenceLengths);
    }

    public Request withKeyPaddingMask(Tensor kp) {
        return new Request(input, memory, target, kp, attnMask, attnMaskBool, causal, weights, sequenceLengths);
    }

    /** @param bool true: non-zero masks out; false: the mask is added to the scaled scores */
    public Request withAttnMask(Tensor mask, boolean bool) {
        return new Request(input, memory, target, keyPaddingMask, mask, bool, causal, weights, sequenceLengths);
    }

    public Request withCausal(boolean c) {
        return new Request(input, memory, target, keyPaddingMask, attnMask, attnMaskBool, c, weights, sequenceLengths);
    }

    public Request withAttentionWeights(AttentionWeights w) {
        return new Request(input, memory, target, keyPaddingMask, attnMask, attnMaskBool, causal, w, sequenceLengths);
    }

    /**
     * A ragged batch of token sequences, for models that take token ids ({@code BertModel}): the input {@code (T)} or
     * {@code (1, T)} holds sequences of these lengths one after another (summing to T), each attending only to itself,
     * with positions restarting at each; no padding and no key-padding mask. The output {@code (T, E)} (or {@code (1,
     * T, E)}) holds each sequence's rows in the same places, equal to running each sequence alone. Whether a device
     * can run one: {@link AttnModel#supportsRaggedBatches()}.
     */
    public Request withSequenceLengths(int... lengths) {
        if (lengths != null && lengths.length == 0)
            throw AttnException.badInput("a ragged batch needs at least one sequence length");
        return new Request(
                input,
                memory,
                target,
                keyPaddingMask,
                attnMask,
                attnMaskBool,
                causal,
                weights,
                lengths == null ? null : lengths.clone());
    }

    /** The sequence lengths of a ragged batch, or null. */
    public int[] sequenceLengths() {
        return sequenceLengths == null ? null : sequenceLengths.clone();
    }

    public Tensor input() {
        return input;
    }

    public Tensor memory() {
        return memory;
    }

    public Tensor target() {
        return target;
    }

    public Tensor keyPaddingMask() {
        return keyPaddingMask;
    }

    public Tensor attnMask() {
        return attnMask;
    }

    public boolean attnMaskBool() {
        return attnMaskBool;
    }

    public boolean causal() {
        return causal;
    }

    public AttentionWeights attentionWeights() {
        return weights;
    }
}
