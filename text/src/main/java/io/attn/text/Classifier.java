package io.attn.text;

import io.attn.AttnException;
import io.attn.engine.Engine;
import java.nio.file.Path;
import java.util.List;

/**
 * A text classifier on an {@link Engine} (a {@code *ForSequenceClassification} Hugging Face folder): texts in, one
 * score per label out, as transformers' model computes the logits and the model's activation turns them into scores
 * (its declared {@code activation_fn}; else sigmoid for one label, softmax over several). Same lifecycle, batching and
 * guarantees as {@link Embedder} and {@link Reranker}: thread-safe, a text's scores bitwise the same in any batch.
 */
public final class Classifier implements AutoCloseable {
    private final SequenceScorer s;

    /** One text's scores, one per label (in the order of {@link #labels()}), and the best label. */
    public record Prediction(float[] scores, String label, float score) {}

    private Classifier(SequenceScorer s) {
        this.s = s;
    }

    public static Classifier load(Engine engine, Path model) {
        return load(engine, model, EmbedderOptions.defaults());
    }

    public static Classifier load(Engine engine, Path model, EmbedderOptions options) {
        if (options == null) options = EmbedderOptions.defaults();
        return load(
                engine, TextModel.read(model, options.tokenizer(), options.task(), options.taskAdapters()), options);
    }

    public static Classifier load(Engine engine, TextModel m, EmbedderOptions options) {
        return new Classifier(SequenceScorer.load("classifier", engine, m, options));
    }

    public String name() {
        return s.name;
    }

    /** The labels ({@code id2label}), one per score. */
    public List<String> labels() {
        return s.labels;
    }

    public int maxLength() {
        return s.maxLength();
    }

    /** {@code sigmoid}, {@code softmax}, {@code identity} or {@code tanh}. */
    public String activation() {
        return s.activation.label();
    }

    /** Texts tokenized alone (cut at the maximum length), for {@link #predict(TokenizedTexts, boolean)}. */
    public TokenizedTexts tokenize(List<String> texts) {
        return tokenize(texts, false);
    }

    /**
     * Texts tokenized alone, those over the maximum length cut on the left when {@code left} (their first tokens
     * dropped, the special tokens kept: transformers' {@code truncation_side="left"}).
     */
    public TokenizedTexts tokenize(List<String> texts, boolean left) {
        s.gate.enter();
        try {
            return s.tokenizeTexts(texts, left);
        } finally {
            s.gate.exit();
        }
    }

    /**
     * Sentence pairs ({@code first[i]}, {@code second[i]}) tokenized together, as transformers' tokenizer takes
     * {@code (text, text_pair)}: {@code [CLS] a [SEP] b [SEP]} with token types 0 and 1 where the model has them,
     * {@code <s> a </s></s> b </s>} for RoBERTa-style models; a pair over the maximum length cut longest first (on
     * the left when {@code left}). Natural-language inference and paraphrase classifiers take pairs.
     */
    public TokenizedTexts tokenizePairs(List<String> first, List<String> second, boolean left) {
        s.gate.enter();
        try {
            return s.tokenizePairs(first, second, left);
        } finally {
            s.gate.exit();
        }
    }

    /**
     * Inputs tokenized in order, each a text alone ({@code [text]}) or a sentence pair ({@code [a, b]}, as {@link
     * #tokenizePairs}): the inputs of TEI's {@code /predict}.
     */
    public TokenizedTexts tokenizeInputs(List<List<String>> inputs, boolean left) {
        if (inputs == null) throw AttnException.badInput("inputs is null");
        if (inputs.isEmpty()) throw AttnException.badInput("no inputs");
        List<TokenizedTexts> parts = new java.util.ArrayList<>(inputs.size());
        for (int i = 0; i < inputs.size(); i++) {
            List<String> in = inputs.get(i);
            if (in == null || in.isEmpty() || in.size() > 2)
                throw AttnException.badInput(
                        "input " + i + " must be one text or a pair of two, got " + (in == null ? 0 : in.size()));
            try {
                parts.add(
                        in.size() == 1
                                ? tokenize(in, left)
                                : tokenizePairs(List.of(in.get(0)), List.of(in.get(1)), left));
            } catch (AttnException e) {
                throw AttnException.badInput("input " + i + ": " + e.getMessage());
            }
        }
        return TokenizedTexts.concat(parts);
    }

    /** Each text's prediction (activated scores). */
    public List<Prediction> classify(List<String> texts) {
        return predict(tokenize(texts), false);
    }

    /** Each sentence pair's prediction (activated scores). */
    public List<Prediction> classifyPairs(List<String> first, List<String> second) {
        return predict(tokenizePairs(first, second, false), false);
    }

    /** Each text's prediction, raw logits when {@code raw}. */
    public List<Prediction> predict(TokenizedTexts texts, boolean raw) {
        float[][] l = logits(texts);
        Prediction[] out = new Prediction[l.length];
        for (int i = 0; i < l.length; i++) {
            float[] sc = raw ? l[i] : s.activation.apply(l[i]);
            int best = 0;
            for (int k = 1; k < sc.length; k++) if (sc[k] > sc[best]) best = k;
            out[i] = new Prediction(sc, s.labels.get(best), sc[best]);
        }
        return List.of(out);
    }

    /** The logits {@code [texts][labels]} of texts tokenized by this classifier. */
    public float[][] logits(TokenizedTexts texts) {
        s.gate.enter();
        try {
            return s.logits(texts);
        } finally {
            s.gate.exit();
        }
    }

    public String description() {
        return s.name + ": classifier, labels " + s.labels + ", " + activation() + ", max " + maxLength() + " tokens";
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
