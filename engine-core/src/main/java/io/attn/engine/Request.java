package io.attn.engine;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.nio.FloatBuffer;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleConsumer;

/**
 * The inputs of one general {@link AttnModel#run} call, for every module kind, with the arguments of PyTorch's {@code
 * forward}. Build with {@code of(...)} and the {@code with...} methods, each of which returns a new request.
 *
 * <ul>
 *   <li>{@code input}: the query ({@code MultiheadAttention}, {@code SelfAttention}), src (encoders, {@code
 *       Transformer}) or tgt (decoders).
 *   <li>{@code memory}: key = value for {@code MultiheadAttention} cross-attention; the encoder output for decoders.
 *   <li>{@code target}: tgt for {@code Transformer}.
 *   <li>Masks, under PyTorch's names ({@link MaskArg}), each bool (non-zero = not allowed to attend, PyTorch's {@code
 *       True}) or float (added to the scaled scores; {@code -inf} masks out), as PyTorch reads a bool or a float
 *       tensor: {@code attn_mask} (MHA's {@code attn_mask}, the encoders' {@code mask} / {@code src_mask}, {@code
 *       Transformer}'s {@code src_mask}) and {@code key_padding_mask} (MHA's, the encoders' and {@code Transformer}'s
 *       {@code src_key_padding_mask}); {@code tgt_mask}, {@code memory_mask}, {@code tgt_key_padding_mask}, {@code
 *       memory_key_padding_mask} for decoders and {@code Transformer}. Attention masks are {@code (L, S)} or {@code
 *       (B*num_heads, L, S)} (unbatched: {@code (num_heads, L, S)}); key-padding masks {@code (B, S)} (unbatched:
 *       {@code (S)}). A module refuses a mask its PyTorch forward does not take.
 *   <li>{@code causal}: the causal mask {@code triu(ones(L, S), 1)} on the self-attention (PyTorch's {@code is_causal}
 *       with that mask; for decoders and {@code Transformer} {@code tgt_is_causal}); {@code memoryCausal}: the same on
 *       a decoder's cross-attention ({@code memory_is_causal}). Applied together with any mask given.
 *   <li>{@code attentionWeights}: which weights to return (default none).
 * </ul>
 *
 * <p>Layouts: {@code (B, L, E)} batch-first, or {@code (L, B, E)} sequence-first when the model's config says {@code
 * "batch_first": false} (as PyTorch's), or unbatched {@code (L, E)}; outputs come back in the same layout. Attention
 * weights are {@code (B, L, S)} or {@code (B, H, L, S)} in either layout, as PyTorch returns them.
 *
 * <p>A model whose input is token ids ({@code BertModel}) takes {@code input} ids {@code (B, L)} or {@code (L)}
 * (integral values stored as float) and an optional bool {@code key_padding_mask} of the same shape, non-zero =
 * padding.
 *
 * <p>Inputs are scanned for NaN and Inf before the call runs (a vectorised pass, small beside the compute); a
 * non-finite value is refused with {@link AttnException.Code#NON_FINITE}. {@link #withFiniteCheck withFiniteCheck(false)}
 * skips the scan (NaN and Inf then flow through the arithmetic as IEEE 754 says).
 *
 * <p>Immutable and thread-safe; the tensors are not copied, so do not mutate their arrays while a call reads them.
 */
public final class Request {
    /** The mask arguments of PyTorch's {@code forward}, by their PyTorch names ({@link #torchName()}). */
    public enum MaskArg {
        ATTN_MASK,
        KEY_PADDING_MASK,
        TGT_MASK,
        MEMORY_MASK,
        TGT_KEY_PADDING_MASK,
        MEMORY_KEY_PADDING_MASK;

        /** The keyword argument's name in PyTorch: {@code attn_mask}, {@code tgt_key_padding_mask}, ... */
        public String torchName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Whether this is a key-padding mask {@code (B, S)} rather than an attention mask {@code (L, S)}. */
        public boolean keyPadding() {
            return this == KEY_PADDING_MASK || this == TGT_KEY_PADDING_MASK || this == MEMORY_KEY_PADDING_MASK;
        }
    }

    /**
     * A mask and how it is read: {@code bool} (non-zero = not allowed to attend) or float (added to the scores), as
     * PyTorch reads a bool or a float mask tensor.
     */
    public record Mask(Tensor values, boolean bool) {
        public Mask {
            if (values == null) throw AttnException.badInput("mask tensor is null");
        }
    }

    /** The fields, copied by each {@code with...}; never changed once a request holds them. */
    private static final class Fields implements Cloneable {
        Tensor input, memory, target;
        EnumMap<MaskArg, Mask> masks = new EnumMap<>(MaskArg.class);
        boolean causal, memoryCausal, finiteCheck = true;
        AttentionWeights weights = AttentionWeights.NONE;
        int[] sequenceLengths;
        Tensor tokenTypes;
        DoubleConsumer progress;

        Fields copy() {
            try {
                Fields f = (Fields) super.clone();
                f.masks = new EnumMap<>(masks);
                return f;
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    private final Fields f;

    private Request(Fields f) {
        if (f.input == null) throw AttnException.badInput("a request needs an input tensor");
        this.f = f;
    }

    public static Request of(Tensor input) {
        Fields f = new Fields();
        f.input = input;
        return new Request(f);
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
        Fields n = f.copy();
        n.memory = m;
        return new Request(n);
    }

    public Request withTarget(Tensor t) {
        Fields n = f.copy();
        n.target = t;
        return new Request(n);
    }

    /**
     * The mask {@code which} ({@code null} removes it).
     *
     * @param bool true: non-zero = not allowed to attend (PyTorch's bool mask); false: added to the scaled scores
     */
    public Request withMask(MaskArg which, Tensor mask, boolean bool) {
        if (which == null) throw AttnException.badInput("mask argument is null");
        Fields n = f.copy();
        if (mask == null) n.masks.remove(which);
        else n.masks.put(which, new Mask(mask, bool));
        return new Request(n);
    }

    /** A bool key-padding mask, non-zero = padding: {@code withMask(KEY_PADDING_MASK, kp, true)}. */
    public Request withKeyPaddingMask(Tensor kp) {
        return withMask(MaskArg.KEY_PADDING_MASK, kp, true);
    }

    /** {@code key_padding_mask}: bool (non-zero = padding) or float (added to the scores of those keys). */
    public Request withKeyPaddingMask(Tensor kp, boolean bool) {
        return withMask(MaskArg.KEY_PADDING_MASK, kp, bool);
    }

    /** {@code attn_mask} (MHA) or {@code src_mask} (encoders, {@code Transformer}): bool or added to the scores. */
    public Request withAttnMask(Tensor mask, boolean bool) {
        return withMask(MaskArg.ATTN_MASK, mask, bool);
    }

    /** {@code tgt_mask}: the decoder's self-attention mask {@code (T, T)} or {@code (B*num_heads, T, T)}. */
    public Request withTgtMask(Tensor mask, boolean bool) {
        return withMask(MaskArg.TGT_MASK, mask, bool);
    }

    /** {@code memory_mask}: the decoder's cross-attention mask {@code (T, S)} or {@code (B*num_heads, T, S)}. */
    public Request withMemoryMask(Tensor mask, boolean bool) {
        return withMask(MaskArg.MEMORY_MASK, mask, bool);
    }

    /** {@code tgt_key_padding_mask} {@code (B, T)}: bool (non-zero = padding) or float. */
    public Request withTgtKeyPaddingMask(Tensor kp, boolean bool) {
        return withMask(MaskArg.TGT_KEY_PADDING_MASK, kp, bool);
    }

    /** {@code memory_key_padding_mask} {@code (B, S)}: bool (non-zero = padding) or float. */
    public Request withMemoryKeyPaddingMask(Tensor kp, boolean bool) {
        return withMask(MaskArg.MEMORY_KEY_PADDING_MASK, kp, bool);
    }

    /** The causal mask on the self-attention ({@code is_causal}; {@code tgt_is_causal} for decoders). */
    public Request withCausal(boolean c) {
        Fields n = f.copy();
        n.causal = c;
        return new Request(n);
    }

    /** The causal mask on a decoder's cross-attention ({@code memory_is_causal}). */
    public Request withMemoryCausal(boolean c) {
        Fields n = f.copy();
        n.memoryCausal = c;
        return new Request(n);
    }

    public Request withAttentionWeights(AttentionWeights w) {
        Fields n = f.copy();
        n.weights = w == null ? AttentionWeights.NONE : w;
        return new Request(n);
    }

    /**
     * Whether the call first scans its inputs (input, memory, target, masks) for NaN and Inf and refuses them with
     * {@link AttnException.Code#NON_FINITE} (default true). A float mask may hold {@code -inf}; NaN is refused
     * everywhere.
     */
    public Request withFiniteCheck(boolean check) {
        Fields n = f.copy();
        n.finiteCheck = check;
        return new Request(n);
    }

    /**
     * A listener told, on the calling thread after each op of the call, the fraction of the call's estimated work
     * done so far (0 to 1; 1 once the outputs are ready). On the CPU it follows the computation; a GPU backend queues
     * its work asynchronously, so there it runs ahead of the device. Null for none (the default).
     */
    public Request withProgress(DoubleConsumer listener) {
        Fields n = f.copy();
        n.progress = listener;
        return new Request(n);
    }

    /**
     * Token type ids (segments) for a token model, the shape of the ids: BERT's 0 for a pair's first text and 1 for
     * its second (integral values stored as float, below the model's {@code type_vocab_size}). Without them every
     * token is type 0. Only for models with token types.
     */
    public Request withTokenTypes(Tensor types) {
        Fields n = f.copy();
        n.tokenTypes = types;
        return new Request(n);
    }

    /** The token type ids, or null. */
    public Tensor tokenTypes() {
        return f.tokenTypes;
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
        Fields n = f.copy();
        n.sequenceLengths = lengths == null ? null : lengths.clone();
        return new Request(n);
    }

    /** The sequence lengths of a ragged batch, or null. */
    public int[] sequenceLengths() {
        return f.sequenceLengths == null ? null : f.sequenceLengths.clone();
    }

    public Tensor input() {
        return f.input;
    }

    public Tensor memory() {
        return f.memory;
    }

    public Tensor target() {
        return f.target;
    }

    /** The mask {@code which}, or null when the request has none. */
    public Mask mask(MaskArg which) {
        return f.masks.get(which);
    }

    /** Every mask the request holds, in {@link MaskArg} order (unmodifiable). */
    public Map<MaskArg, Mask> masks() {
        return Collections.unmodifiableMap(f.masks);
    }

    public boolean causal() {
        return f.causal;
    }

    public boolean memoryCausal() {
        return f.memoryCausal;
    }

    public AttentionWeights attentionWeights() {
        return f.weights;
    }

    public boolean finiteCheck() {
        return f.finiteCheck;
    }

    /** The progress listener, or null. */
    public DoubleConsumer progress() {
        return f.progress;
    }
}
