package io.attn.text;

import io.attn.AttnException;
import io.attn.engine.Engine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A cross-encoder on an {@link Engine}: (query, passage) pairs in, one relevance score per pair out, as
 * sentence-transformers' {@code CrossEncoder.predict} computes it: each pair tokenized together ({@code [CLS] query
 * [SEP] passage [SEP]} with token types 0 and 1 for BERT, {@code <s> query </s></s> passage </s>} for XLM-RoBERTa),
 * cut to the maximum length as transformers' {@code truncation=True} cuts a pair (longest first), the model's
 * classification head on the first token, then the model's activation ({@code activation_fn}; sigmoid by default for
 * one label).
 *
 * <pre>{@code
 * try (Engine engine = Engine.open(EngineOptions.defaults());
 *         Reranker r = Reranker.load(engine, Path.of("ms-marco-MiniLM-L6-v2"))) {
 *     List<Reranker.Ranked> top = r.rank("what is attention?", passages, 5, false);
 * }
 * }</pre>
 *
 * <p>Loads a Hugging Face folder whose {@code config.json} names a {@code *ForSequenceClassification} architecture
 * (a {@code CrossEncoder.save} of any version, or {@code save_pretrained}). Batching as {@link Embedder}'s (pairs
 * batched by tokens); a pair's score is bitwise the same alone or with any others. Thread-safe; {@link #close} waits
 * for calls in flight and is idempotent.
 */
public final class Reranker implements AutoCloseable {
    private final SequenceScorer s;

    /** One passage's place in a ranking: its index in the input and its score. */
    public record Ranked(int index, float score) {}

    private Reranker(SequenceScorer s) {
        this.s = s;
    }

    public static Reranker load(Engine engine, Path model) {
        return load(engine, model, EmbedderOptions.defaults());
    }

    /** Loads with options: the maximum length, batch limits and tokenizer of {@link EmbedderOptions} apply. */
    public static Reranker load(Engine engine, Path model, EmbedderOptions options) {
        if (options == null) options = EmbedderOptions.defaults();
        return load(
                engine, TextModel.read(model, options.tokenizer(), options.task(), options.taskAdapters()), options);
    }

    public static Reranker load(Engine engine, TextModel m, EmbedderOptions options) {
        // a reranker scores with one output; several labels make a classifier (CrossEncoder.rank refuses them too)
        if (m != null && m.isClassifier() && m.labels().size() != 1)
            throw AttnException.badInput(
                    m.source() + ": a classifier of " + m.labels().size() + " labels "
                            + m.labels() + ", not a reranker (a cross-encoder with one label): use a Classifier (attn"
                            + " classify, /predict)");
        return new Reranker(SequenceScorer.load("reranker", engine, m, options));
    }

    public String name() {
        return s.name;
    }

    /** Pairs longer than this many tokens (special tokens included) are cut. */
    public int maxLength() {
        return s.maxLength();
    }

    /** The number of outputs of the model's head (1 for a reranker). */
    public int numLabels() {
        return s.labels.size();
    }

    /** The activation applied to the logits: {@code sigmoid}, {@code softmax}, {@code identity} or {@code tanh}. */
    public String activation() {
        return s.activation.label();
    }

    /** The score of each passage for the query, in input order (activated unless {@code raw}). */
    public float[] score(String query, List<String> passages, boolean raw) {
        if (passages == null) throw AttnException.badInput("passages is null");
        return scores(tokenize(query, passages), raw);
    }

    /** The activated score of each passage for the query. */
    public float[] score(String query, List<String> passages) {
        return score(query, passages, false);
    }

    /** The passages' indices and scores, best first (ties by index), at most {@code topN} (0: all). */
    public List<Ranked> rank(String query, List<String> passages, int topN, boolean raw) {
        if (topN < 0) throw AttnException.badInput("top n must be >= 0, got " + topN);
        return ranked(score(query, passages, raw), topN);
    }

    /** Scores sorted best first (ties by index), at most {@code topN} (0: all). */
    public static List<Ranked> ranked(float[] scores, int topN) {
        List<Ranked> r = new ArrayList<>(scores.length);
        for (int i = 0; i < scores.length; i++) r.add(new Ranked(i, scores[i]));
        r.sort((a, b) ->
                a.score() != b.score() ? Float.compare(b.score(), a.score()) : Integer.compare(a.index, b.index));
        return topN > 0 && topN < r.size() ? List.copyOf(r.subList(0, topN)) : Collections.unmodifiableList(r);
    }

    /**
     * The pairs (query, passage i) tokenized, for {@link #scores(TokenizedTexts, boolean)}: the token counts are known
     * (to check limits) before anything runs, and several callers' pairs can be scored in one call ({@link
     * TokenizedTexts#concat}).
     */
    public TokenizedTexts tokenize(String query, List<String> passages) {
        return tokenize(query, passages, false);
    }

    /**
     * {@link #tokenize(String, List)}, pairs over the maximum length cut on the left when {@code left} (the longer
     * text's first tokens dropped: transformers' {@code truncation_side="left"}, TEI's {@code truncation_direction}).
     */
    public TokenizedTexts tokenize(String query, List<String> passages, boolean left) {
        if (query == null) throw AttnException.badInput("query is null");
        if (passages == null) throw AttnException.badInput("passages is null");
        s.gate.enter();
        try {
            return s.tokenizePairs(Collections.nCopies(passages.size(), query), passages, left);
        } finally {
            s.gate.exit();
        }
    }

    /** The scores of pairs tokenized by this reranker, in order (activated unless {@code raw}). */
    public float[] scores(TokenizedTexts pairs, boolean raw) {
        float[][] l = logits(pairs);
        float[] out = new float[l.length];
        for (int i = 0; i < l.length; i++) out[i] = raw ? l[i][0] : s.activation.apply(l[i])[0];
        return out;
    }

    /** The logits {@code [pairs][labels]} of pairs tokenized by this reranker. */
    public float[][] logits(TokenizedTexts pairs) {
        s.gate.enter();
        try {
            return s.logits(pairs);
        } finally {
            s.gate.exit();
        }
    }

    /** One line: the model, its head, activation, maximum length. */
    public String description() {
        return s.name + ": cross-encoder, " + numLabels() + " label" + (numLabels() == 1 ? "" : "s") + ", "
                + activation() + ", max " + maxLength() + " tokens per pair";
    }

    SequenceScorer scorer() {
        return s;
    }

    /** Each text's tokens (strings, special flags, character spans), not truncated; for tools such as TEI's /tokenize. */
    public List<List<Token>> tokenDetails(List<String> texts, boolean addSpecial) {
        return s.tokenizer.details(s.gate, texts, addSpecial);
    }

    /** The text of token ids (special tokens left out when {@code skipSpecial}), as transformers' decode. */
    public String decode(int[] ids, boolean skipSpecial) {
        return s.tokenizer.decode(s.gate, ids, skipSpecial);
    }

    /** The model's activation applied to one sequence's logits (a new array). */
    public float[] activate(float[] logits) {
        return s.activation.apply(logits);
    }

    public boolean isClosed() {
        return s.gate.isClosed();
    }

    @Override
    public void close() {
        s.close();
    }
}
