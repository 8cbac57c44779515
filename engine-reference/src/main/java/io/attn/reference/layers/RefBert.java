package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Map;

/**
 * Double-precision reference for Hugging Face transformers' {@code BertModel} (eval mode, absolute positions) on one
 * unpadded sequence, written from transformers' {@code modeling_bert.py}: embeddings {@code word[ids] + token_type[0] +
 * position[0..L-1]}, LayerNorm; per layer {@code x = LN(x + dense_o(softmax(q k^T / sqrt(D)) v))}, {@code x = LN(x +
 * dense_2(act(dense_1(x))))}. Weights under transformers' names without the {@code bert.} prefix. Returns the last
 * hidden state {@code (L, E)} of one sequence whose first {@code keys} tokens are real and the rest padding (masked
 * out of every query's keys, as transformers' {@code attention_mask} does; padded queries are computed too).
 */
public final class RefBert {
    private RefBert() {}

    /**
     * @param act {@code gelu} (erf), {@code gelu_new} (tanh approximation) or {@code relu}
     */
    public static DTensor lastHiddenState(
            Map<String, Tensor> w, int[] ids, int keys, int layers, int heads, double eps, String act) {
        return forward(w, ids, keys, layers, heads, eps, act, null);
    }

    /**
     * The attention weights {@code (B, H, L, L)} of layer {@code layer} for a right-padded batch: sequence b holds
     * {@code seqs[b]} then padding (id 0) up to {@code len}; masked keys get weight 0.
     */
    public static DTensor attentionWeights(
            Map<String, Tensor> w, int[][] seqs, int len, int layer, int layers, int heads, double eps, String act) {
        double[] out = new double[seqs.length * heads * len * len];
        for (int b = 0; b < seqs.length; b++) {
            int[] row = new int[len];
            System.arraycopy(seqs[b], 0, row, 0, seqs[b].length);
            double[][] perLayer = new double[layers][];
            forward(w, row, seqs[b].length, layers, heads, eps, act, perLayer);
            System.arraycopy(perLayer[layer], 0, out, b * heads * len * len, heads * len * len);
        }
        return new DTensor(new int[] {seqs.length, heads, len, len}, out);
    }

    private static DTensor forward(
            Map<String, Tensor> w,
            int[] ids,
            int keys,
            int layers,
            int heads,
            double eps,
            String act,
            double[][] weights) {
        int len = ids.length;
        Tensor word = w.get("embeddings.word_embeddings.weight");
        int e = word.dim(1);
        int[] zeros = new int[len], positions = new int[len];
        for (int i = 0; i < len; i++) positions[i] = i;
        DTensor x = RefMath.add(
                RefMath.add(
                        RefEmbedding.embedding(word, ids, len),
                        RefEmbedding.embedding(w.get("embeddings.token_type_embeddings.weight"), zeros, len)),
                RefEmbedding.embedding(w.get("embeddings.position_embeddings.weight"), positions, len));
        x = RefMath.layerNorm(x, w.get("embeddings.LayerNorm.weight"), w.get("embeddings.LayerNorm.bias"), eps);
        for (int l = 0; l < layers; l++) {
            String n = "encoder.layer." + l + ".";
            DTensor q = linear(w, x, n + "attention.self.query");
            DTensor k = linear(w, x, n + "attention.self.key");
            DTensor v = linear(w, x, n + "attention.self.value");
            double[] p = new double[heads * ids.length * ids.length];
            DTensor ctx = selfAttention(q, k, v, heads, keys, p);
            if (weights != null) weights[l] = p;
            DTensor a = linear(w, ctx, n + "attention.output.dense");
            x = RefMath.layerNorm(
                    RefMath.add(a, x),
                    w.get(n + "attention.output.LayerNorm.weight"),
                    w.get(n + "attention.output.LayerNorm.bias"),
                    eps);
            DTensor h = activation(linear(w, x, n + "intermediate.dense"), act);
            DTensor o = linear(w, h, n + "output.dense");
            x = RefMath.layerNorm(
                    RefMath.add(o, x), w.get(n + "output.LayerNorm.weight"), w.get(n + "output.LayerNorm.bias"), eps);
        }
        if (x.dim(-1) != e) throw new IllegalStateException("width changed");
        return x;
    }

    private static DTensor linear(Map<String, Tensor> w, DTensor x, String name) {
        Tensor weight = w.get(name + ".weight");
        if (weight == null) throw new IllegalArgumentException("missing " + name + ".weight");
        return RefMath.linear(x, weight, w.get(name + ".bias"));
    }

    /**
     * softmax(q k^T / sqrt(D)) v per head, on (L, E) inputs split into {@code heads} heads of D = E / heads, over the
     * first {@code keys} keys only; the weights go to {@code weights (H, L, L)}.
     */
    static DTensor selfAttention(DTensor q, DTensor k, DTensor v, int heads, int keys, double[] weights) {
        int len = q.dim(0), e = q.dim(1), d = e / heads;
        double scale = 1.0 / Math.sqrt(d);
        double[] out = new double[len * e];
        double[] s = new double[len];
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < len; i++) {
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j < keys; j++) {
                    double dot = 0;
                    for (int c = 0; c < d; c++) dot += q.data()[i * e + h * d + c] * k.data()[j * e + h * d + c];
                    s[j] = dot * scale;
                    max = Math.max(max, s[j]);
                }
                double sum = 0;
                for (int j = 0; j < keys; j++) sum += s[j] = Math.exp(s[j] - max);
                for (int j = 0; j < keys; j++) {
                    weights[(h * len + i) * len + j] = s[j] / sum;
                    for (int c = 0; c < d; c++) out[i * e + h * d + c] += s[j] / sum * v.data()[j * e + h * d + c];
                }
            }
        return new DTensor(new int[] {len, e}, out);
    }

    private static DTensor activation(DTensor x, String act) {
        if (!act.equals("gelu_new")) return RefMath.activation(x, act);
        double[] out = new double[x.size()];
        double c = Math.sqrt(2 / Math.PI);
        for (int i = 0; i < out.length; i++) {
            double t = x.data()[i];
            out[i] = 0.5 * t * (1 + Math.tanh(c * (t + 0.044715 * t * t * t)));
        }
        return new DTensor(x.shape().clone(), out);
    }
}
