package io.attn.engine.internal;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Request;
import io.attn.engine.Request.MaskArg;
import io.attn.engine.Result;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.Signature;
import io.attn.tensor.Finite;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link Request} checked against the PyTorch {@code forward} of the model's module and run: which inputs and masks
 * the module takes and their shapes, NaN/Inf unless the request opts out, the caller's layout (unbatched, sequence-first)
 * to the graph's {@code (B, L, E)} and back, and the token path (ids, padding or a ragged batch). The internal
 * {@link Model} then runs a {@link Signature} and feeds.
 *
 * <p>The API layer's door for the engine's own modules ({@link AttnModel}, the parity harness, tests): it takes a
 * {@link Model} and a {@link Backend}, which are not part of the public API, so its package is exported only to them.
 * Stateless and thread-safe.
 */
public final class ModuleCalls {
    private ModuleCalls() {}

    /** Runs {@code in} on {@code model} on {@code backend}, as {@link AttnModel#run} does. */
    public static Result run(Model model, Backend backend, Request in) {
        if (model.isClosed()) throw new IllegalStateException("model is closed");
        ModelConfig config = model.config();
        if (config.takesTokenIds()) return runTokens(model, backend, in);
        if (in.sequenceLengths() != null)
            throw AttnException.badInput(config.kind() + " does not take a ragged batch (sequence lengths): pad it");
        requireInputs(config, in.memory(), in.target());
        boolean unbatched = in.input().rank() == 2;
        Tensor x = layout(config, in.input(), unbatched, "input");
        Tensor mem = in.memory() == null ? null : layout(config, in.memory(), unbatched, "memory");
        Tensor tgt = in.target() == null ? null : layout(config, in.target(), unbatched, "target");
        sameBatch(mem, in.memory(), x, "memory");
        sameBatch(tgt, in.target(), x, "target");
        if (in.memoryCausal() && !config.takesMemory())
            throw AttnException.badInput("memory_is_causal is not an argument of " + config.kind()
                    + "'s forward (it is for a decoder's cross-attention)");
        Map<String, Tensor> feeds = new HashMap<>();
        Map<String, Signature.MaskSig> masks = new LinkedHashMap<>();
        for (var e : in.masks().entrySet()) {
            Tensor m = maskTensor(config, e.getKey(), e.getValue().values(), x, mem, tgt, unbatched);
            masks.put(
                    e.getKey().torchName(),
                    new Signature.MaskSig(m.shape(), e.getValue().bool()));
            feeds.put(e.getKey().torchName(), m);
        }
        if (in.finiteCheck()) {
            checkFinite(in.input(), "input");
            if (mem != null) checkFinite(in.memory(), "memory");
            if (tgt != null) checkFinite(in.target(), "target");
            for (var e : in.masks().entrySet()) {
                Tensor m = e.getValue().values();
                int bad = Finite.indexOfNanOrPositiveInfinity(m.data());
                if (bad >= 0)
                    throw new AttnException(
                                    AttnException.Code.NON_FINITE,
                                    e.getKey().torchName() + " holds " + m.data()[bad] + " at " + m.indexString(bad)
                                            + " (a mask may hold -inf, not NaN or +inf)")
                            .about(e.getKey().torchName());
            }
        }
        Signature s = new Signature(
                x.shape(),
                mem == null ? null : mem.shape(),
                tgt == null ? null : tgt.shape(),
                masks,
                in.causal(),
                in.memoryCausal(),
                in.attentionWeights(),
                null);
        feeds.put("input", x);
        if (mem != null) feeds.put("memory", mem);
        if (tgt != null) feeds.put("target", tgt);
        Model.Outputs out = model.run(backend, s, feeds, in.progress());
        return new Result(toLayout(config, out.output(), unbatched), weights(out, unbatched));
    }

    /** The attention weights by block name, unbatched with the input. */
    private static Map<String, Tensor> weights(Model.Outputs out, boolean unbatched) {
        Map<String, Tensor> weights = new LinkedHashMap<>();
        for (int i = 0; i < out.weights().size(); i++) {
            Tensor w = out.weights().get(i);
            weights.put(
                    out.weightBlocks().get(i), unbatched ? w.reshape(w.shape().remove(0)) : w);
        }
        return weights;
    }

    /**
     * The mask {@code which} checked against the module and the batch-first inputs, shaped for the graph: attention
     * masks {@code (L, S)} or {@code (B, H, L, S)} (from PyTorch's {@code (B*H, L, S)}), key-padding masks {@code (B,
     * S)}. L and S are the mask's queries and keys: the src for encoders' masks, tgt for {@code tgt_*}, tgt against
     * the memory (the src for {@code Transformer}) for {@code memory_*}, query against key for MHA.
     */
    private static Tensor maskTensor(
            ModelConfig config, MaskArg which, Tensor m, Tensor x, Tensor mem, Tensor tgt, boolean unbatched) {
        String name = which.torchName();
        if (!config.maskArguments().contains(name))
            throw AttnException.badInput(name + " is not an argument of " + config.kind() + "'s forward (its masks are "
                            + config.maskArguments() + ")")
                    .about(name);
        boolean transformer = config.kind() == ModelConfig.Kind.Transformer;
        Tensor decoderInput = transformer ? tgt : x, encoderOutput = transformer ? x : mem;
        Tensor queries =
                switch (which) {
                    case ATTN_MASK, KEY_PADDING_MASK -> x;
                    case TGT_MASK, TGT_KEY_PADDING_MASK, MEMORY_MASK, MEMORY_KEY_PADDING_MASK -> decoderInput;
                };
        Tensor keys =
                switch (which) {
                    case ATTN_MASK, KEY_PADDING_MASK -> mem != null && !transformer ? mem : x;
                    case TGT_MASK, TGT_KEY_PADDING_MASK -> decoderInput;
                    case MEMORY_MASK, MEMORY_KEY_PADDING_MASK -> encoderOutput;
                };
        int b = x.dim(0), l = queries.dim(1), s = keys.dim(1), h = config.heads();
        if (which.keyPadding()) {
            if (unbatched && m.rank() == 1 && m.dim(0) == s) return m.reshape(1, s);
            if (m.rank() == 2 && m.dim(0) == b && m.dim(1) == s) return m;
            throw AttnException.shape(name + " has shape " + m.shape() + ": expected "
                            + (unbatched ? "(S) = (" + s + ")" : "(B, S) = (" + b + ", " + s + ")"))
                    .about(name);
        }
        if (m.rank() == 2 && m.dim(0) == l && m.dim(1) == s) return m;
        if (m.rank() == 3 && m.dim(0) == b * h && m.dim(1) == l && m.dim(2) == s) return m.reshape(b, h, l, s);
        throw AttnException.shape(name + " has shape " + m.shape() + ": expected (L, S) = (" + l + ", " + s + ") or "
                        + (unbatched ? "(num_heads, L, S) = (" : "(B*num_heads, L, S) = (") + b * h + ", " + l + ", "
                        + s
                        + ")")
                .about(name);
    }

    /**
     * An input in the graph's layout {@code (B, L, E)}: unbatched {@code (L, E)} gets a batch of one; a sequence-first
     * model's {@code (L, B, E)} is transposed (a copy).
     */
    private static Tensor layout(ModelConfig config, Tensor t, boolean unbatched, String what) {
        int e = config.width();
        String want = unbatched ? "(L, " + e + ")" : config.batchFirst() ? "(B, L, " + e + ")" : "(L, B, " + e + ")";
        String or = unbatched ? "" : " or (L, " + e + ")";
        if (t.rank() != (unbatched ? 2 : 3))
            throw AttnException.shape(what + " has shape " + t.shape() + ": expected " + want
                            + (what.equals("input") ? or : ", as the input is"))
                    .about(what);
        if (t.dim(-1) != e)
            throw AttnException.shape(what + " has shape " + t.shape() + " but the model width is " + e + ": expected "
                            + want + or)
                    .about(what);
        if (unbatched) return t.reshape(1, t.dim(0), t.dim(1));
        return config.batchFirst() ? t : swap01(t);
    }

    /** An output back in the caller's layout (see {@link #layout}). */
    private static Tensor toLayout(ModelConfig config, Tensor t, boolean unbatched) {
        if (unbatched) return t.reshape(t.shape().remove(0));
        return config.batchFirst() ? t : swap01(t);
    }

    /** {@code (P, Q, E) -> (Q, P, E)}: PyTorch's {@code transpose(0, 1)}, copied. */
    private static Tensor swap01(Tensor t) {
        int p = t.dim(0), q = t.dim(1), e = t.dim(2);
        float[] src = t.data(), dst = new float[src.length];
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) System.arraycopy(src, (i * q + j) * e, dst, (j * p + i) * e, e);
        return Tensor.of(dst, q, p, e);
    }

    private static void checkFinite(Tensor t, String what) {
        int bad = Finite.indexOfNonFinite(t.data());
        if (bad >= 0)
            throw new AttnException(
                            AttnException.Code.NON_FINITE,
                            what + " holds " + t.data()[bad] + " at " + t.indexString(bad) + ": inputs must be finite")
                    .about(what);
    }

    /**
     * A model whose input is token ids: ids {@code (B, L)} or {@code (L)} with an optional key-padding mask of that
     * shape; or a ragged batch, ids {@code (1, T)} or {@code (T)} with the sequences' lengths.
     */
    private static Result runTokens(Model model, Backend backend, Request in) {
        ModelConfig config = model.config();
        Request.Mask kpMask = in.mask(MaskArg.KEY_PADDING_MASK);
        if (in.memory() != null
                || in.target() != null
                || in.masks().size() != (kpMask == null ? 0 : 1)
                || in.causal()
                || in.memoryCausal())
            throw AttnException.badInput(config.kind()
                    + " takes token ids and a key-padding mask only (no memory, target, other masks or causal)");
        if (kpMask != null && !kpMask.bool())
            throw AttnException.badInput(config.kind() + " takes a bool key-padding mask (non-zero = padding)");
        Tensor ids = in.input();
        boolean unbatched = ids.rank() == 1;
        if (unbatched) ids = ids.reshape(1, ids.dim(0));
        if (ids.rank() != 2)
            throw AttnException.shape("token ids have shape " + in.input().shape() + ": expected (B, L) or (L)");
        int b = ids.dim(0), len = ids.dim(1);
        if (b == 0 || len == 0)
            throw AttnException.shape("token ids have shape " + in.input().shape() + ": empty");
        int vocab = config.encoder().vocabSize();
        float[] d = ids.data();
        for (int i = 0; i < d.length; i++)
            if (!(d[i] >= 0 && d[i] < vocab && d[i] == Math.rint(d[i])))
                throw AttnException.badInput("token id " + d[i] + " at [" + i / len + ", " + i % len
                        + "] is not in the vocabulary [0, " + vocab + ")");
        int[] lengths = in.sequenceLengths();
        Tensor kp = kpMask == null ? null : kpMask.values();
        List<Integer> segments = null;
        if (lengths != null) {
            if (b != 1)
                throw AttnException.shape("a ragged batch is one row of token ids (1, T) or (T), got " + ids.shape());
            if (kp != null) throw AttnException.badInput("a ragged batch has no padding: no key-padding mask");
            if (in.attentionWeights() != AttentionWeights.NONE)
                throw AttnException.badInput("attention weights are not available for a ragged batch (pad the batch)");
            long total = 0;
            segments = new ArrayList<>(lengths.length);
            for (int n : lengths) {
                if (n <= 0) throw AttnException.badInput("sequence lengths must be positive, got " + n);
                total += n;
                segments.add(n);
            }
            if (total != len)
                throw AttnException.shape("sequence lengths sum to " + total + " but there are " + len + " token ids");
        } else if (kp != null) {
            if (unbatched && kp.rank() == 1) kp = kp.reshape(1, kp.dim(0));
            if (!kp.shape().equals(ids.shape()))
                throw AttnException.shape("key-padding mask " + kpMask.values().shape() + " does not fit token ids "
                        + in.input().shape() + ": expected the same shape");
        }
        if (in.finiteCheck() && kp != null) checkFinite(kp, "key_padding_mask");
        Tensor types = in.tokenTypes();
        if (types != null) {
            int typeVocab = config.encoder().typeVocabSize();
            if (typeVocab == 0)
                throw AttnException.badInput(
                        config.encoder().modelType() + " has no token types (type_vocab_size 0): send none");
            if (unbatched && types.rank() == 1) types = types.reshape(1, types.dim(0));
            if (!types.shape().equals(ids.shape()))
                throw AttnException.shape("token types " + in.tokenTypes().shape() + " do not fit token ids "
                        + in.input().shape() + ": expected the same shape");
            float[] t = types.data();
            for (int i = 0; i < t.length; i++)
                if (!(t[i] >= 0 && t[i] < typeVocab && t[i] == Math.rint(t[i])))
                    throw AttnException.badInput("token type " + t[i] + " at [" + i / len + ", " + i % len
                            + "] is not in [0, " + typeVocab + ") (type_vocab_size)");
        }
        Model.Outputs out = model.runTokens(backend, ids, types, kp, segments, in.attentionWeights(), in.progress());
        Tensor y = out.output();
        return new Result(unbatched ? y.reshape(y.shape().remove(0)) : y, weights(out, unbatched));
    }

    private static void requireInputs(ModelConfig config, Tensor mem, Tensor tgt) {
        switch (config.kind()) {
            case TransformerDecoderLayer, TransformerDecoder -> {
                if (mem == null)
                    throw AttnException.badInput(config.kind() + " needs a memory input (the encoder output)");
            }
            case Transformer -> {
                if (tgt == null) throw AttnException.badInput("Transformer needs a target input (tgt)");
            }
            default -> {}
        }
    }

    /** {@code t} (as given: {@code original}) has the batch of the input {@code x}; both in the graph's layout. */
    private static void sameBatch(Tensor t, Tensor original, Tensor x, String what) {
        if (t != null && t.dim(0) != x.dim(0))
            throw AttnException.shape(what + " has shape " + original.shape() + " but the input has batch " + x.dim(0)
                            + ": the batch sizes must match")
                    .about(what);
    }
}
