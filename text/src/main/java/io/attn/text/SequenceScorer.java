package io.attn.text;

import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.Gate;
import io.attn.engine.Request;
import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.List;

/**
 * What {@link Reranker} and {@link Classifier} share: a sequence-classification model ({@code
 * *ForSequenceClassification}) on an engine, its tokenizer, and the batching of {@link Embedder} (ragged on the CPU,
 * sorted and padded elsewhere; at most {@code maxBatchSize} sequences and {@code maxBatchTokens} tokens a pass) with the
 * engine's classification head on each sequence's first token. Every batch holds at least {@link #MIN_SEQUENCES}
 * sequences (short ones are topped up with one-token dummies): the head's products then take the same path whatever
 * the batch, so a sequence's logits are bitwise the same alone or with any others. Thread-safe.
 */
final class SequenceScorer implements AutoCloseable {
    /** Sequences per forward pass at least (as {@link Embedder#MIN_BATCH_ROWS} rows for the encoder's products). */
    static final int MIN_SEQUENCES = 8;

    final Gate gate;
    final String name;
    final AttnModel model;
    final TextTokenizer tokenizer;
    final List<String> labels;
    final Activation activation;
    final boolean tokenTypes;
    private final int maxBatchSize, maxBatchTokens, maxPositions;
    private volatile boolean ragged;

    private SequenceScorer(
            String what, String name, AttnModel model, TextTokenizer tokenizer, TextModel m, EmbedderOptions o) {
        this.gate = new Gate(what);
        this.name = name;
        this.model = model;
        this.tokenizer = tokenizer;
        this.labels = m.labels();
        this.activation = Activation.of(m.activation(), m.labels().size(), m.source());
        Object types = model.config().get("type_vocab_size");
        this.tokenTypes = types instanceof Number n && n.intValue() > 1;
        this.maxBatchSize = Math.max(o.maxBatchSize(), MIN_SEQUENCES);
        this.maxBatchTokens = o.batchTokensFor(tokenizer.maxLength());
        this.maxPositions = m.maxPositions();
        this.ragged = model.supportsRaggedBatches();
    }

    static SequenceScorer load(String what, Engine engine, TextModel m, EmbedderOptions o) {
        if (engine == null || m == null) throw AttnException.badInput("engine and model are required");
        if (o == null) o = EmbedderOptions.defaults();
        o = Embedder.withTask(m, o);
        if (!m.isClassifier())
            throw AttnException.badInput(m.source() + ": not a sequence classifier (config.json's architectures name"
                    + " no *ForSequenceClassification): a " + what + " needs a cross-encoder or classifier;"
                    + " an embedding model is an Embedder");
        int maxLength = o.maxLength() > 0 ? o.maxLength() : m.maxLength();
        if (maxLength > m.maxPositions())
            throw AttnException.badInput("max length " + maxLength + " is more than the model's " + m.maxPositions()
                    + " positions (max_position_embeddings)");
        if (maxLength < 4) throw AttnException.badInput("max length " + maxLength + " leaves no room for a pair");
        o.batchTokensFor(maxLength); // a budget below the max length is refused here, before the weights load
        TextTokenizer t = TextTokenizer.load(m.tokenizer(), maxLength);
        try {
            AttnModel am = engine.loadOwned(m.config(), m.weights(), m.source());
            return new SequenceScorer(what, m.name(), am, t, m, o);
        } catch (RuntimeException | Error e) {
            t.close();
            throw e;
        }
    }

    /** Runs padded batches even where the device runs ragged ones (the path of devices without them; for tests). */
    void usePaddedBatches() {
        ragged = false;
    }

    int maxLength() {
        return tokenizer.maxLength();
    }

    /** Texts checked (no null, valid Unicode) and tokenized alone. */
    TokenizedTexts tokenizeTexts(List<String> texts, boolean left) {
        check(texts, "text");
        return new TokenizedTexts(
                texts.isEmpty()
                        ? new TextTokenizer.Tokens[0]
                        : left ? tokenizer.encodeLeft(texts) : tokenizer.encode(texts),
                tokenizer);
    }

    /** Pairs checked and tokenized together ({@code first[i]}, {@code second[i]}). */
    TokenizedTexts tokenizePairs(List<String> first, List<String> second) {
        return tokenizePairs(first, second, false);
    }

    /** Pairs checked and tokenized together, cut on the left when {@code left}. */
    TokenizedTexts tokenizePairs(List<String> first, List<String> second, boolean left) {
        check(first, "query");
        check(second, "passage");
        if (first.size() != second.size())
            throw AttnException.badInput(first.size() + " first texts but " + second.size() + " second texts");
        return new TokenizedTexts(
                first.isEmpty()
                        ? new TextTokenizer.Tokens[0]
                        : left ? tokenizer.encodePairsLeft(first, second) : tokenizer.encodePairs(first, second),
                tokenizer);
    }

    private static void check(List<String> texts, String what) {
        if (texts == null) throw AttnException.badInput(what + "s is null");
        for (int i = 0; i < texts.size(); i++) {
            String t = texts.get(i);
            if (t == null) throw AttnException.badInput(what + " " + i + " is null");
            for (int j = 0; j < t.length(); j++) {
                char c = t.charAt(j);
                if (Character.isSurrogate(c)) {
                    if (Character.isHighSurrogate(c) && j + 1 < t.length() && Character.isLowSurrogate(t.charAt(j + 1)))
                        j++;
                    else
                        throw AttnException.badInput(
                                what + " " + i + " holds an unpaired surrogate at char " + j + " (not valid Unicode)");
                }
            }
        }
    }

    /** The logits {@code [n][labels]} of sequences tokenized by this scorer, in input order. */
    float[][] logits(TokenizedTexts texts) {
        if (texts == null) throw AttnException.badInput("texts is null");
        if (texts.owner != tokenizer) throw AttnException.badInput("these texts were tokenized by another model");
        TextTokenizer.Tokens[] toks = texts.tokens;
        float[][] out = new float[toks.length][];
        if (toks.length == 0) return out;
        if (ragged) {
            for (int[] b :
                    Embedder.raggedPlan(toks, maxBatchSize, maxBatchTokens).batches()) runRagged(toks, b[0], b[1], out);
        } else {
            Embedder.Plan p = Embedder.plan(toks, maxBatchSize, maxBatchTokens);
            for (int[] b : p.batches()) runPadded(toks, p.order(), b[0], b[1], b[2], out);
        }
        return out;
    }

    private Request withTypes(Request r, float[] types, int... shape) {
        return tokenTypes ? r.withTokenTypes(Tensor.of(types, shape)) : r;
    }

    private void runRagged(TextTokenizer.Tokens[] toks, int start, int end, float[][] out) {
        int n = end - start, dummies = Math.max(0, MIN_SEQUENCES - n);
        int total = dummies;
        for (int i = start; i < end; i++) total += toks[i].ids().length;
        int[] lengths = new int[n + dummies];
        float[] ids = new float[total], types = new float[total];
        int at = 0;
        for (int i = start; i < end; i++) {
            int[] t = toks[i].ids(), ty = toks[i].types();
            for (int j = 0; j < t.length; j++) {
                ids[at + j] = t[j];
                if (ty != null) types[at + j] = ty[j];
            }
            lengths[i - start] = t.length;
            at += t.length;
        }
        for (int d = 0; d < dummies; d++) lengths[n + d] = 1; // id 0, type 0
        Request r = withTypes(Request.of(Tensor.of(ids, 1, total)).withSequenceLengths(lengths), types, 1, total);
        float[] y = model.run(r).output().data();
        int c = labels.size();
        for (int i = 0; i < n; i++) out[start + i] = Arrays.copyOfRange(y, i * c, (i + 1) * c);
    }

    private void runPadded(
            TextTokenizer.Tokens[] toks, Integer[] order, int start, int end, int longest, float[][] out) {
        int n = end - start, b = Math.max(n, MIN_SEQUENCES);
        int len = Math.max(longest, Math.min(maxPositions, (Embedder.MIN_BATCH_ROWS + b - 1) / b));
        float[] ids = new float[b * len], types = new float[b * len], pad = new float[b * len];
        for (int r = 0; r < b; r++) {
            int[] t = r < n ? toks[order[start + r]].ids() : new int[1];
            int[] ty = r < n ? toks[order[start + r]].types() : null;
            for (int j = 0; j < t.length; j++) {
                ids[r * len + j] = t[j];
                if (ty != null) types[r * len + j] = ty[j];
            }
            Arrays.fill(pad, r * len + t.length, (r + 1) * len, 1f);
        }
        Request req =
                withTypes(Request.of(Tensor.of(ids, b, len)).withKeyPaddingMask(Tensor.of(pad, b, len)), types, b, len);
        float[] y = model.run(req).output().data();
        int c = labels.size();
        for (int r = 0; r < n; r++) out[order[start + r]] = Arrays.copyOfRange(y, r * c, (r + 1) * c);
    }

    @Override
    public void close() {
        gate.close(() -> {
            try {
                model.close();
            } finally {
                tokenizer.close();
            }
        });
    }

    /**
     * The function applied to a model's logits: sentence-transformers' CrossEncoder {@code activation_fn} when the
     * model declares one, else sigmoid for one label and softmax over several.
     */
    enum Activation {
        SIGMOID,
        SOFTMAX,
        IDENTITY,
        TANH;

        static Activation of(String declared, int labels, String source) {
            if (declared == null) return labels == 1 ? SIGMOID : SOFTMAX;
            String cls = declared.substring(declared.lastIndexOf('.') + 1);
            return switch (cls) {
                case "Sigmoid" -> SIGMOID;
                case "Softmax" -> SOFTMAX;
                case "Identity" -> IDENTITY;
                case "Tanh" -> TANH;
                default ->
                    throw AttnException.badInput(source + ": activation_fn \"" + declared
                            + "\" is not supported (Sigmoid, Softmax, Identity, Tanh)");
            };
        }

        /** The activated scores of one sequence's logits (a new array), computed in double. */
        float[] apply(float[] logits) {
            float[] s = new float[logits.length];
            switch (this) {
                case SIGMOID -> {
                    for (int i = 0; i < s.length; i++) s[i] = (float) (1 / (1 + Math.exp(-(double) logits[i])));
                }
                case TANH -> {
                    for (int i = 0; i < s.length; i++) s[i] = (float) Math.tanh(logits[i]);
                }
                case IDENTITY -> System.arraycopy(logits, 0, s, 0, s.length);
                case SOFTMAX -> {
                    double max = Double.NEGATIVE_INFINITY, sum = 0;
                    for (float x : logits) max = Math.max(max, x);
                    double[] e = new double[s.length];
                    for (int i = 0; i < s.length; i++) sum += e[i] = Math.exp(logits[i] - max);
                    for (int i = 0; i < s.length; i++) s[i] = (float) (e[i] / sum);
                }
            }
            return s;
        }

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
