package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Seeded random state dicts with PyTorch's {@code state_dict()} names and shapes, for tests of the engine's layers.
 * Linear/projection weights and biases are {@code U(-1/sqrt(fan_in), 1/sqrt(fan_in))} (like PyTorch's Linear default),
 * LayerNorm weights {@code 1 + U(-0.1, 0.1)} and biases {@code U(-0.1, 0.1)}. The same seed gives the same dict.
 * Maps keep insertion order (the order PyTorch lists the parameters).
 */
public final class RandomStateDicts {
    private RandomStateDicts() {}

    /** {@code nn.MultiheadAttention(e, h, bias=bias)}: in_proj_weight/bias, out_proj.weight/bias. */
    public static Map<String, Tensor> multiheadAttention(int e, boolean bias, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        putMha(sd, "", e, bias, new SplittableRandom(seed));
        return sd;
    }

    /** {@code nn.TransformerEncoderLayer} with the given config. */
    public static Map<String, Tensor> encoderLayer(LayerConfig cfg, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        putEncoderLayer(sd, "", cfg, new SplittableRandom(seed));
        return sd;
    }

    /** {@code nn.TransformerDecoderLayer} with the given config. */
    public static Map<String, Tensor> decoderLayer(LayerConfig cfg, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        putDecoderLayer(sd, "", cfg, new SplittableRandom(seed));
        return sd;
    }

    /** {@code nn.TransformerEncoder}: {@code layers.N.*} and, when {@code finalNorm}, {@code norm.*}. */
    public static Map<String, Tensor> encoder(LayerConfig cfg, int numLayers, boolean finalNorm, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        putEncoder(sd, "", cfg, numLayers, finalNorm, new SplittableRandom(seed));
        return sd;
    }

    /** {@code nn.TransformerDecoder}: {@code layers.N.*} and, when {@code finalNorm}, {@code norm.*}. */
    public static Map<String, Tensor> decoder(LayerConfig cfg, int numLayers, boolean finalNorm, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        putDecoder(sd, "", cfg, numLayers, finalNorm, new SplittableRandom(seed));
        return sd;
    }

    /** {@code nn.Transformer}: {@code encoder.layers.N.*}, {@code encoder.norm.*}, {@code decoder.layers.N.*}, ... */
    public static Map<String, Tensor> transformer(TransformerConfig cfg, long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        SplittableRandom rnd = new SplittableRandom(seed);
        putEncoder(sd, "encoder.", cfg.layer(), cfg.numEncoderLayers(), true, rnd);
        putDecoder(sd, "decoder.", cfg.layer(), cfg.numDecoderLayers(), true, rnd);
        return sd;
    }

    /**
     * A decoder-only LM ({@code DecoderOnlyLM}): {@code embed.weight (V, E)} in U(-1, 1), {@code pos.weight (maxLen, E)}
     * when {@code learned}, {@code layers.N.*} (encoder layers), {@code norm.*} when {@code finalNorm}, {@code
     * lm_head.weight} unless {@code tied}, {@code lm_head.bias} when {@code headBias}.
     */
    public static Map<String, Tensor> decoderOnlyLM(
            LayerConfig c,
            int vocab,
            int numLayers,
            int maxLen,
            boolean learned,
            boolean tied,
            boolean finalNorm,
            boolean headBias,
            long seed) {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        SplittableRandom rnd = new SplittableRandom(seed);
        sd.put("embed.weight", uniform(rnd, -1, 1, vocab, c.dModel()));
        if (learned) sd.put("pos.weight", uniform(rnd, -1, 1, maxLen, c.dModel()));
        putEncoder(sd, "", c, numLayers, finalNorm, rnd);
        if (!tied) sd.put("lm_head.weight", uniform(rnd, -1, 1, vocab, c.dModel()));
        if (headBias) sd.put("lm_head.bias", uniform(rnd, -0.5, 0.5, vocab));
        return sd;
    }

    /**
     * A Hugging Face {@code BertModel} state dict (transformers' names, no prefix) with random weights: embeddings of
     * scale 0.5 (so the LayerNorms see varied rows), linear layers {@code U(-1/sqrt(in), 1/sqrt(in))}.
     */
    public static Map<String, Tensor> bert(
            int vocab, int hidden, int layers, int intermediate, int maxPositions, int typeVocab, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, Tensor> sd = new LinkedHashMap<>();
        sd.put("embeddings.word_embeddings.weight", uniform(rnd, -0.5, 0.5, vocab, hidden));
        sd.put("embeddings.position_embeddings.weight", uniform(rnd, -0.5, 0.5, maxPositions, hidden));
        sd.put("embeddings.token_type_embeddings.weight", uniform(rnd, -0.5, 0.5, typeVocab, hidden));
        putNorm(sd, "embeddings.LayerNorm.", hidden, true, rnd);
        for (int l = 0; l < layers; l++) {
            String p = "encoder.layer." + l + ".";
            for (String n : new String[] {"query", "key", "value"})
                putLinear(sd, p + "attention.self." + n + ".", hidden, hidden, true, rnd);
            putLinear(sd, p + "attention.output.dense.", hidden, hidden, true, rnd);
            putNorm(sd, p + "attention.output.LayerNorm.", hidden, true, rnd);
            putLinear(sd, p + "intermediate.dense.", intermediate, hidden, true, rnd);
            putLinear(sd, p + "output.dense.", hidden, intermediate, true, rnd);
            putNorm(sd, p + "output.LayerNorm.", hidden, true, rnd);
        }
        return sd;
    }

    /** A tensor of the given shape with entries {@code U(lo, hi)} (e.g. inputs or an embedding table). */
    public static Tensor uniform(long seed, double lo, double hi, int... dims) {
        return uniform(new SplittableRandom(seed), lo, hi, dims);
    }

    private static Tensor uniform(SplittableRandom rnd, double lo, double hi, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) (lo + (hi - lo) * rnd.nextDouble());
        return t;
    }

    private static void putMha(Map<String, Tensor> sd, String p, int e, boolean bias, SplittableRandom rnd) {
        double a = 1.0 / Math.sqrt(e);
        sd.put(p + "in_proj_weight", uniform(rnd, -a, a, 3 * e, e));
        if (bias) sd.put(p + "in_proj_bias", uniform(rnd, -a, a, 3 * e));
        putLinear(sd, p + "out_proj.", e, e, bias, rnd);
    }

    private static void putLinear(Map<String, Tensor> sd, String p, int out, int in, boolean bias, SplittableRandom r) {
        double a = 1.0 / Math.sqrt(in);
        sd.put(p + "weight", uniform(r, -a, a, out, in));
        if (bias) sd.put(p + "bias", uniform(r, -a, a, out));
    }

    private static void putNorm(Map<String, Tensor> sd, String p, int e, boolean bias, SplittableRandom rnd) {
        sd.put(p + "weight", uniform(rnd, 0.9, 1.1, e));
        if (bias) sd.put(p + "bias", uniform(rnd, -0.1, 0.1, e));
    }

    private static void putFeedForward(Map<String, Tensor> sd, String p, LayerConfig c, SplittableRandom rnd) {
        putLinear(sd, p + "linear1.", c.dimFeedforward(), c.dModel(), c.bias(), rnd);
        putLinear(sd, p + "linear2.", c.dModel(), c.dimFeedforward(), c.bias(), rnd);
    }

    private static void putEncoderLayer(Map<String, Tensor> sd, String p, LayerConfig c, SplittableRandom rnd) {
        putMha(sd, p + "self_attn.", c.dModel(), c.bias(), rnd);
        putFeedForward(sd, p, c, rnd);
        putNorm(sd, p + "norm1.", c.dModel(), c.bias(), rnd);
        putNorm(sd, p + "norm2.", c.dModel(), c.bias(), rnd);
    }

    private static void putDecoderLayer(Map<String, Tensor> sd, String p, LayerConfig c, SplittableRandom rnd) {
        putMha(sd, p + "self_attn.", c.dModel(), c.bias(), rnd);
        putMha(sd, p + "multihead_attn.", c.dModel(), c.bias(), rnd);
        putFeedForward(sd, p, c, rnd);
        putNorm(sd, p + "norm1.", c.dModel(), c.bias(), rnd);
        putNorm(sd, p + "norm2.", c.dModel(), c.bias(), rnd);
        putNorm(sd, p + "norm3.", c.dModel(), c.bias(), rnd);
    }

    private static void putEncoder(
            Map<String, Tensor> sd, String p, LayerConfig c, int n, boolean finalNorm, SplittableRandom rnd) {
        for (int i = 0; i < n; i++) putEncoderLayer(sd, p + "layers." + i + ".", c, rnd);
        if (finalNorm) putNorm(sd, p + "norm.", c.dModel(), c.bias(), rnd);
    }

    private static void putDecoder(
            Map<String, Tensor> sd, String p, LayerConfig c, int n, boolean finalNorm, SplittableRandom rnd) {
        for (int i = 0; i < n; i++) putDecoderLayer(sd, p + "layers." + i + ".", c, rnd);
        if (finalNorm) putNorm(sd, p + "norm.", c.dModel(), c.bias(), rnd);
    }
}
