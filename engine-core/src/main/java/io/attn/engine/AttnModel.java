package io.attn.engine;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.internal.ModuleCalls;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A model loaded into an {@link Engine}: its weights and the executors (planned buffers, uploaded weights, pooled
 * working memory) built for the input shapes seen so far. Load it once, call it from many threads.
 *
 * <p>Thread-safe: every method may be called from many threads at once; concurrent calls give exactly the results of
 * the same calls made one after another (bitwise on the CPU backend). A failing call (bad shape, bad input) throws
 * {@link AttnException} to its caller only and leaves the model usable. {@link #close} waits for the calls in flight,
 * then releases the executors; it is idempotent; any call after it throws {@link IllegalStateException}. Closing the
 * engine closes its models.
 */
public final class AttnModel implements AutoCloseable {
    private final Engine engine;
    private final Backend backend;
    private final Model model;
    private final Gate gate = new Gate("model");

    AttnModel(Engine engine, Backend backend, Model model) {
        this.engine = engine;
        this.backend = backend;
        this.model = model;
    }

    /**
     * The configuration: {@code "module"} and every constructor argument under PyTorch's names, defaults filled in (as
     * {@link ModelConfigs#withDefaults} gives it).
     */
    public Map<String, Object> config() {
        return model.config().arguments();
    }

    /** The module kind, as the config's {@code "module"} names it ({@code TransformerEncoderLayer}, {@code BertModel}...). */
    public String kind() {
        return model.config().kind().name();
    }

    /** The model width E: the last dimension of every input. */
    public int width() {
        return model.config().width();
    }

    /**
     * Whether this model's device runs ragged batches ({@link Request#withSequenceLengths}): token sequences of
     * different lengths laid one after another, no padding. The CPU does; a backend that does not takes padded
     * batches with a key-padding mask instead.
     */
    public boolean supportsRaggedBatches() {
        return model.runsRaggedBatches(backend);
    }

    /** Runs the model on a general request (every module kind, masks, attention weights). */
    public Result run(Request r) {
        if (r == null) throw AttnException.badInput("request is null");
        gate.enter();
        try {
            return ModuleCalls.run(model, backend, r);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw Failures.of(e, "running the model");
        } finally {
            gate.exit();
        }
    }

    /**
     * Encodes a batch {@code x (B, L, E)} ({@code (L, B, E)} for a {@code "batch_first": false} model; or one sequence
     * {@code (L, E)}) into the output of the same shape: the encoder output for {@code TransformerEncoder(Layer)}, the
     * self-attention output for {@code MultiheadAttention} and {@code SelfAttention}.
     */
    public Tensor encode(Tensor x) {
        return encode(x, null);
    }

    /** {@link #encode(Tensor)} with a bool key padding mask {@code (B, L)}, non-zero = padding (may be null). */
    public Tensor encode(Tensor x, Tensor keyPaddingMask) {
        requireKind(
                "encode",
                ModelConfig.Kind.TransformerEncoderLayer,
                ModelConfig.Kind.TransformerEncoder,
                ModelConfig.Kind.MultiheadAttention,
                ModelConfig.Kind.SelfAttention);
        return run(Request.of(x).withKeyPaddingMask(keyPaddingMask)).output();
    }

    /**
     * Encodes sequences of different lengths {@code (L_i, E)} in one batch: they are zero-padded to the longest, the
     * padding is masked out of the keys, and each output {@code (L_i, E)} is returned without its padding. Equal (to
     * rounding) to encoding each sequence alone.
     */
    public List<Tensor> encodeBatch(List<Tensor> sequences) {
        if (sequences == null || sequences.isEmpty()) throw AttnException.badInput("no sequences to encode");
        int e = width(), maxL = 0;
        for (int i = 0; i < sequences.size(); i++) {
            Tensor s = sequences.get(i);
            if (s == null || s.rank() != 2 || s.dim(1) != e)
                throw AttnException.shape("sequence " + i + " has shape " + (s == null ? "null" : s.shape())
                        + ": expected (L, " + e + ")");
            if (s.dim(0) == 0) throw AttnException.shape("sequence " + i + " is empty");
            maxL = Math.max(maxL, s.dim(0));
        }
        int b = sequences.size();
        boolean batchFirst = model.config().batchFirst();
        // row l of sequence i sits at (i, l) batch-first, at (l, i) sequence-first
        int seqStride = batchFirst ? maxL * e : e, rowStride = batchFirst ? e : b * e;
        float[] x = new float[Math.multiplyExact(Math.multiplyExact(b, maxL), e)];
        float[] pad = new float[b * maxL];
        for (int i = 0; i < b; i++) {
            Tensor s = sequences.get(i);
            for (int l = 0; l < s.dim(0); l++) System.arraycopy(s.data(), l * e, x, i * seqStride + l * rowStride, e);
            for (int l = s.dim(0); l < maxL; l++) pad[i * maxL + l] = 1f;
        }
        Tensor xs = batchFirst ? Tensor.of(x, b, maxL, e) : Tensor.of(x, maxL, b, e);
        Tensor y = encode(xs, Tensor.of(pad, b, maxL));
        List<Tensor> out = new ArrayList<>(b);
        for (int i = 0; i < b; i++) {
            int n = sequences.get(i).dim(0);
            float[] d = new float[n * e];
            for (int l = 0; l < n; l++) System.arraycopy(y.data(), i * seqStride + l * rowStride, d, l * e, e);
            out.add(Tensor.of(d, n, e));
        }
        return out;
    }

    /**
     * Self-attention of {@code x (B, L, E)} or {@code (L, E)} ({@code MultiheadAttention} with query = key = value, or
     * the tutorials' {@code SelfAttention}), causal when asked, with the weights asked for (block {@code "attn"} for {@code
     * MultiheadAttention}, {@code "self_attn"} for {@code SelfAttention}).
     */
    public Result selfAttention(Tensor x, boolean causal, AttentionWeights weights) {
        requireKind("selfAttention", ModelConfig.Kind.MultiheadAttention, ModelConfig.Kind.SelfAttention);
        return run(Request.of(x).withCausal(causal).withAttentionWeights(weights));
    }

    /**
     * Cross-attention of {@code query (B, L, E)} over {@code memory (B, S, E)} (key = value = memory) for a {@code
     * MultiheadAttention} model; unbatched {@code (L, E)} and {@code (S, E)} work too.
     */
    public Result crossAttention(Tensor query, Tensor memory, AttentionWeights weights) {
        requireKind("crossAttention", ModelConfig.Kind.MultiheadAttention);
        if (memory == null) throw AttnException.badInput("crossAttention needs a memory tensor");
        return run(Request.of(query).withMemory(memory).withAttentionWeights(weights));
    }

    /** Whether {@link #close} has been called (directly or by closing the engine). */
    public boolean isClosed() {
        return gate.isClosed();
    }

    /** Waits for calls in flight, then releases the executors. Idempotent. */
    @Override
    public void close() {
        gate.close(() -> {
            model.close();
            engine.forget(this);
        });
    }

    private void requireKind(String what, ModelConfig.Kind... kinds) {
        ModelConfig.Kind k = model.config().kind();
        for (ModelConfig.Kind ok : kinds) if (ok == k) return;
        throw AttnException.badInput(
                what + "() is for " + List.of(kinds) + ", this model is a " + k + ": use run(Request)");
    }
}
