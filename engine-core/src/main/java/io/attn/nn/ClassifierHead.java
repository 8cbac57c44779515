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
 * hidden state (BERT's {@code [CLS]}, RoBERTa's {@code <s>}):
 *
 * <pre>
 * BERT (BertPooler + classifier):                 logits = classifier(tanh(pooler.dense(h[0])))
 * RoBERTa, XLM-R, CamemBERT, MPNet (ClassificationHead): logits = classifier.out_proj(tanh(classifier.dense(h[0])))
 * DistilBERT:                                     logits = classifier(relu(pre_classifier(h[0])))
 * </pre>
 *
 * (dropout is the identity in eval mode). Built from the graph's existing ops, so every backend runs it: the first
 * tokens are picked by a product with a one-hot selector {@link #SELECT} (exact: one product of 1 and the value, the
 * rest zeros), and {@code tanh(y) = sigmoid(2y) - sigmoid(-2y)}, the difference of a two-way softmax of {@code [y, 0]}
 * scaled by 2 (within a few float ulps of tanh).
 *
 * @param relu DistilBERT's ReLU instead of tanh
 * @param labels the label of each output ({@code id2label}, {@code LABEL_i} where it names none); its size is {@code
 *     num_labels}
 * @param dense the first linear layer's weight prefix (after the task model's prefix is removed)
 * @param out the output layer's weight prefix
 */
public record ClassifierHead(boolean relu, List<String> labels, String dense, String out) {
    /** Name of the graph input that picks each sequence's first token: {@code (B', M, L')} one-hot rows. */
    public static final String SELECT = "first_token_select";

    public ClassifierHead {
        labels = List.copyOf(labels);
        if (labels.isEmpty()) throw AttnException.badInput("num_labels must be at least 1");
    }

    public int numLabels() {
        return labels.size();
    }

    /** The weight prefixes the head reads. */
    public List<String> prefixes() {
        return List.of(dense, out);
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
        if (family == EncoderFamily.GTE || family == EncoderFamily.NOMIC_BERT)
            throw AttnException.badInput(
                    r.source() + ": a " + family.modelTypes().getFirst() + " sequence classifier (" + a
                            + ") is not supported: attn runs this family's encoder only");
        if (family == EncoderFamily.BERT) return new ClassifierHead(false, labels, "pooler.dense.", "classifier.");
        if (family == EncoderFamily.DISTILBERT)
            return new ClassifierHead(true, labels, "pre_classifier.", "classifier.");
        return new ClassifierHead(false, labels, "classifier.dense.", "classifier.out_proj.");
    }

    /** The head's layers, loaded. */
    record Loaded(ClassifierHead head, Linear dense, Linear out) {
        static Loaded load(ClassifierHead h, StateDict sd, int hidden) {
            return new Loaded(
                    h,
                    Linear.load(sd, h.dense(), hidden, hidden, true),
                    Linear.load(sd, h.out(), hidden, h.numLabels(), true));
        }

        /**
         * The logits {@code (B', M, C)} of the sequences whose first tokens {@code select (B', M, L')} picks out of
         * {@code hidden (B', L', E)}.
         */
        Node forward(Forward f, Node hidden, Node select) {
            GraphBuilder g = f.builder();
            Node first = g.matmul(select, hidden); // (B', M, E)
            Node y = dense.forward(f, first, head.relu());
            if (!head.relu()) y = tanh(g, y);
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
