package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.io.JsonFields;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The sequence-classification head of transformers' {@code *ForSequenceClassification} encoders, on the first token's
 * hidden state (BERT's {@code [CLS]}, RoBERTa's {@code <s>}) or, for ModernBERT with {@code classifier_pooling}
 * {@code mean}, on the mean of the sequence's hidden states:
 *
 * <pre>
 * BERT, GTE, NomicBERT (pooler + classifier):      logits = classifier(tanh(pooler.dense(h[0])))
 * RoBERTa, XLM-R, CamemBERT, MPNet (ClassificationHead): logits = classifier.out_proj(tanh(classifier.dense(h[0])))
 * DistilBERT:                                     logits = classifier(relu(pre_classifier(h[0])))
 * ModernBERT (ModernBertPredictionHead):          logits = classifier(head.norm(gelu(head.dense(pool(h)))))
 * Qwen3, Qwen2, Mistral, Llama, Gemma 3 (transformers' GenericForSequenceClassification; Qwen3-Reranker's
 *   sequence-classification form):               logits = score(h[last]), no bias; last: the rightmost token whose
 *                                                 id is not the pad token's
 * </pre>
 *
 * (dropout is the identity in eval mode). Built from the graph's existing ops, so every backend runs it: the first
 * tokens are picked by a product with a one-hot selector {@link #SELECT} (exact: one product of 1 and the value, the
 * rest zeros; for a mean, rows of {@code 1/n} over the sequence's tokens), and {@code tanh(y) = sigmoid(2y) -
 * sigmoid(-2y)}, the difference of a two-way softmax of {@code [y, 0]} scaled by 2 (within a few float ulps of tanh).
 *
 * @param act the activation after the first linear layer
 * @param labels the label of each output ({@code id2label}, {@code LABEL_i} where it names none); its size is {@code
 *     num_labels}
 * @param dense the first linear layer's weight prefix (after the task model's prefix is removed)
 * @param denseBias whether it has a bias (ModernBERT: {@code classifier_bias}, default false; the others: true)
 * @param norm the LayerNorm after the activation (ModernBERT's {@code head.norm.}); null when none
 * @param pool which token (or tokens) the head reads ({@link Pool})
 * @param out the output layer's weight prefix
 * @param outBias whether the output layer has a bias (the decoders' {@code score} has none)
 * @param padTokenId the pad token's id ({@link Pool#LAST}: the head reads the last token whose id is not this one);
 *     -1 when the config names none
 */
public record ClassifierHead(
        Act act,
        List<String> labels,
        String dense,
        boolean denseBias,
        String norm,
        Pool pool,
        String out,
        boolean outBias,
        int padTokenId) {
    /** The activation after the head's first linear layer; NONE: there is no first layer (the decoders' head). */
    public enum Act {
        TANH,
        RELU,
        GELU,
        NONE
    }

    /** Which of a sequence's tokens the head reads. */
    public enum Pool {
        /** The first token (BERT's {@code [CLS]}, RoBERTa's {@code <s>}). */
        FIRST,
        /** The mean of the sequence's tokens (ModernBERT's {@code classifier_pooling} {@code mean}). */
        MEAN,
        /**
         * The last token whose id is not the pad token's (transformers' decoders: the rightmost such token; the last
         * token when the config has no pad token; the first when every token is the pad token).
         */
        LAST
    }

    /**
     * Name of the graph input that picks each sequence's first token: {@code (B', M, L')} one-hot rows (or, with
     * {@link #mean}, rows of {@code 1/n} over each sequence's {@code n} tokens).
     */
    public static final String SELECT = "first_token_select";

    /** A head on the first token, with biases and no norm: BERT's, RoBERTa's, DistilBERT's. */
    public ClassifierHead(Act act, List<String> labels, String dense, String out) {
        this(act, labels, dense, true, null, Pool.FIRST, out, true, -1);
    }

    public ClassifierHead {
        labels = List.copyOf(labels);
        if (labels.isEmpty()) throw AttnException.badInput("num_labels must be at least 1");
        java.util.Objects.requireNonNull(pool, "pool");
        if ((act == Act.NONE) != (dense == null))
            throw new IllegalArgumentException("a head has a first layer exactly when it has an activation");
    }

    /** Whether the head reads the mean of the sequence's tokens ({@link Pool#MEAN}). */
    public boolean mean() {
        return pool == Pool.MEAN;
    }

    public int numLabels() {
        return labels.size();
    }

    /** The weight prefixes the head reads. */
    public List<String> prefixes() {
        List<String> p = new ArrayList<>();
        for (String s : new String[] {dense, norm, out}) if (s != null) p.add(s);
        return List.copyOf(p);
    }

    /**
     * The head a Hugging Face {@code config.json} declares: one of its {@code architectures} ends with {@code
     * ForSequenceClassification}; null when none does (an encoder alone).
     */
    static ClassifierHead fromHuggingFace(JsonFields r, EncoderFamily family) {
        Object a = r.get("architectures");
        boolean classifier = false;
        if (a instanceof List<?> l)
            for (Object o : l) if (o instanceof String s && s.endsWith("ForSequenceClassification")) classifier = true;
        if (!classifier) return null;
        Map<Integer, String> byId = new java.util.TreeMap<>();
        Object id2label = r.get("id2label");
        if (id2label instanceof Map<?, ?> m)
            for (var e : m.entrySet()) {
                int id;
                try {
                    id = Integer.parseInt(String.valueOf(e.getKey()));
                } catch (NumberFormatException ex) {
                    throw AttnException.badInput(
                            r.source() + ": id2label key \"" + e.getKey() + "\" is not a label index");
                }
                byId.put(id, String.valueOf(e.getValue()));
            }
        else if (id2label != null) throw AttnException.badInput(r.source() + ": \"id2label\" must be an object");
        int n = byId.isEmpty() ? r.integer("num_labels", 2) : byId.size();
        if (n < 1) throw AttnException.badInput(r.source() + ": num_labels must be at least 1, got " + n);
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (!byId.isEmpty() && !byId.containsKey(i))
                throw AttnException.badInput(
                        r.source() + ": id2label has no label " + i + " (its keys must be 0.." + (n - 1) + ")");
            labels.add(byId.getOrDefault(i, "LABEL_" + i));
        }
        String pt = r.string("problem_type", null);
        if (pt != null
                && !pt.equals("single_label_classification")
                && !pt.equals("multi_label_classification")
                && !pt.equals("regression"))
            throw AttnException.badInput(r.source() + ": problem_type \"" + pt + "\" is not known");
        if (family instanceof DecoderFamily || family instanceof GemmaFamily)
            return new ClassifierHead(
                    Act.NONE,
                    labels,
                    null,
                    false,
                    null,
                    Pool.LAST,
                    "score.",
                    false,
                    // the config class's default when the key is absent: Gemma3TextConfig's 0, the others' None
                    !r.map().containsKey("pad_token_id")
                            ? (family instanceof GemmaFamily ? 0 : -1)
                            : r.get("pad_token_id") == null ? -1 : r.integer("pad_token_id", -1));
        if (family == EncoderFamily.BERT || family == EncoderFamily.GTE || family == EncoderFamily.NOMIC_BERT)
            return new ClassifierHead(Act.TANH, labels, "pooler.dense.", "classifier.");
        if (family == EncoderFamily.DISTILBERT)
            return new ClassifierHead(Act.RELU, labels, "pre_classifier.", "classifier.");
        if (family == EncoderFamily.MODERNBERT) {
            String pooling = r.string("classifier_pooling", "cls");
            if (!pooling.equals("cls") && !pooling.equals("mean"))
                throw AttnException.badInput(
                        r.source() + ": classifier_pooling \"" + pooling + "\" is not known (cls or mean)");
            String act = r.string("classifier_activation", "gelu");
            if (!act.equals("gelu"))
                throw AttnException.badInput(r.source() + ": classifier_activation \"" + act
                        + "\" is not supported (attn runs \"gelu\", ModernBERT's default)");
            return new ClassifierHead(
                    Act.GELU,
                    labels,
                    "head.dense.",
                    r.bool("classifier_bias", false),
                    "head.norm.",
                    pooling.equals("mean") ? Pool.MEAN : Pool.FIRST,
                    "classifier.",
                    true,
                    -1);
        }
        return new ClassifierHead(Act.TANH, labels, "classifier.dense.", "classifier.out_proj.");
    }

    /** The head's layers, loaded. */
    record Loaded(ClassifierHead head, Linear dense, LayerNorm norm, Linear out) {
        static Loaded load(ClassifierHead h, StateDict sd, EncoderConfig c) {
            int hidden = c.hiddenSize();
            boolean normBias = c.variant() != null && c.variant().normBias();
            return new Loaded(
                    h,
                    h.dense() == null ? null : Linear.load(sd, h.dense(), hidden, hidden, h.denseBias()),
                    h.norm() == null ? null : LayerNorm.load(sd, h.norm(), hidden, c.layerNormEps(), normBias),
                    Linear.load(sd, h.out(), hidden, h.numLabels(), h.outBias()));
        }

        /**
         * The logits {@code (B', M, C)} of the sequences whose first tokens (or, pooling by the mean, whose tokens; or
         * their last tokens) {@code select (B', M, L')} picks out of {@code hidden (B', L', E)}.
         */
        Node forward(Forward f, Node hidden, Node select) {
            GraphBuilder g = f.builder();
            Node first = g.matmul(select, hidden); // (B', M, E)
            Node y =
                    switch (head.act()) {
                        case RELU -> dense.forward(f, first, true);
                        case TANH -> tanh(g, dense.forward(f, first));
                        case GELU -> g.gelu(dense.forward(f, first), false);
                        case NONE -> first;
                    };
            if (norm != null) y = norm.forward(f, y);
            return out.forward(f, y);
        }
    }

    /** {@code tanh} of {@code y (B', M, E)}, element-wise: {@code sigmoid(2y) - sigmoid(-2y)} by a two-way softmax. */
    static Node tanh(GraphBuilder g, Node y) {
        int e = y.shape().dim(2);
        Node col = g.splitHeads(y, e); // (B', E, M, 1)
        Node pair = g.matmul(col, g.constant("tanh.pair", Tensor.of(new float[] {1, 0}, 1, 2))); // [y, 0]
        Node p = g.softmax(pair, 2f, MaskSpec.NONE, null, null); // [sigmoid(2y), sigmoid(-2y)]
        Node d = g.matmul(p, g.constant("tanh.difference", Tensor.of(new float[] {1, -1}, 2, 1)));
        return g.mergeHeads(d); // (B', M, E)
    }
}
