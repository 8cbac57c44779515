package io.attn.nn;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.exec.Executor;
import io.attn.tensor.Tensor;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Incremental decoding of a batch of sequences with a {@link DecoderOnlyLM} on one backend: {@link #prefill} runs the
 * prompts in one pass (filling the {@link KvCache}), then each {@link #step} runs one new token per sequence against the
 * cache. Prompts of different lengths are left-padded to the longest: padding rows are hidden from every query by the
 * key-padding mask, and each sequence's positions start at 0 at its first real token, so a padded sequence computes
 * what it would compute alone.
 *
 * <p>Not thread-safe. Close it to release the cache and the executors.
 */
public final class DecoderSession implements AutoCloseable {
    private static final int MAX_PREFILL_GRAPHS = 4;

    private final DecoderOnlyLM lm;
    private final Backend backend;
    private final int batch, capacity;
    private final KvCache cache;
    private final Map<Integer, Executor> prefill = new LinkedHashMap<>(); // by prompt length, oldest first
    private Executor step;
    private final int[] pad;
    private int length = -1; // cache rows in use; -1 before the first prefill

    /** A session for {@code batch} sequences of at most {@code capacity} tokens (prompt plus generated). */
    public DecoderSession(DecoderOnlyLM lm, Backend backend, int batch, int capacity) {
        if (batch <= 0) throw AttnException.badInput("batch must be positive, got " + batch);
        if (capacity <= 0 || capacity > lm.config().maxLen())
            throw AttnException.badInput("sequence capacity " + capacity + " must be in [1, max_len = "
                    + lm.config().maxLen() + "]");
        this.lm = lm;
        this.backend = backend;
        this.batch = batch;
        this.capacity = capacity;
        this.pad = new int[batch];
        this.cache = new KvCache(backend, lm.numLayers(), batch, lm.numHeads(), capacity, lm.headDim());
    }

    public int capacity() {
        return capacity;
    }

    /** Cache rows in use (the longest prompt plus the steps so far). */
    public int length() {
        return Math.max(0, length);
    }

    public KvCache cache() {
        return cache;
    }

    /**
     * Starts over with {@code prompts} (one token-id array per sequence, each non-empty); returns the logits {@code (B,
     * V)} that follow each prompt's last token.
     */
    public float[][] prefill(int[][] prompts) {
        if (prompts.length != batch)
            throw AttnException.badInput(prompts.length + " prompts for a session of batch " + batch);
        int p = 0;
        for (int[] pr : prompts) {
            if (pr.length == 0) throw AttnException.badInput("empty prompt");
            p = Math.max(p, pr.length);
        }
        if (p > capacity)
            throw AttnException.badInput("a prompt of " + p + " tokens does not fit the capacity of " + capacity);
        float[] ids = new float[batch * p], positions = new float[batch * p];
        for (int b = 0; b < batch; b++) {
            pad[b] = p - prompts[b].length;
            for (int s = pad[b]; s < p; s++) {
                ids[b * p + s] = prompts[b][s - pad[b]];
                positions[b * p + s] = s - pad[b];
            }
        }
        Executor ex = prefill.get(p);
        if (ex == null) {
            if (prefill.size() >= MAX_PREFILL_GRAPHS) {
                Iterator<Executor> it = prefill.values().iterator();
                it.next().close();
                it.remove();
            }
            ex = new Executor(backend, lm.graph(batch, p, capacity));
            prefill.put(p, ex);
        }
        length = p;
        return run(ex, ids, positions, 0, p, p);
    }

    /** Appends one token per sequence; returns the logits {@code (B, V)} that follow it. */
    public float[][] step(int[] tokens) {
        if (length < 0) throw new IllegalStateException("step before prefill");
        if (tokens.length != batch) throw AttnException.badInput(tokens.length + " tokens for a batch of " + batch);
        if (length >= capacity)
            throw AttnException.badInput("the sequence capacity of " + capacity + " tokens is used up");
        float[] ids = new float[batch], positions = new float[batch];
        for (int b = 0; b < batch; b++) {
            ids[b] = tokens[b];
            positions[b] = length - pad[b];
        }
        if (step == null) step = new Executor(backend, lm.graph(batch, 1, capacity));
        int row = length++;
        return run(step, ids, positions, row, 1, length);
    }

    private float[][] run(Executor ex, float[] ids, float[] positions, int row, int len, int visible) {
        float[] kp = new float[batch * capacity]; // 1 = hidden: left padding and rows past the last written one
        for (int b = 0; b < batch; b++)
            for (int s = 0; s < capacity; s++) if (s < pad[b] || s >= visible) kp[b * capacity + s] = 1f;
        Map<String, Tensor> in = new HashMap<>();
        in.put("ids", Tensor.of(ids, batch, len));
        in.put("positions", Tensor.of(positions, batch, len));
        in.put("pos", Tensor.of(new float[] {row}, 1));
        in.put("key_padding", Tensor.of(kp, batch, capacity));
        List<Tensor> out = ex.run(in, cache.bindings());
        float[] logits = out.get(0).data();
        int v = lm.config().vocabSize();
        float[][] rows = new float[batch][];
        for (int b = 0; b < batch; b++) rows[b] = java.util.Arrays.copyOfRange(logits, b * v, (b + 1) * v);
        return rows;
    }

    @Override
    public void close() {
        for (Executor e : prefill.values()) e.close();
        prefill.clear();
        if (step != null) step.close();
        step = null;
        cache.close();
    }
}
