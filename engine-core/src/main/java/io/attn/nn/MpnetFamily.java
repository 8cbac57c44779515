package io.attn.nn;

import io.attn.io.JsonFields;
import java.util.List;

/**
 * MPNet ({@code model_type} {@code mpnet}: all-mpnet-base-v2, multi-qa-mpnet, paraphrase-mpnet): BERT's keys and
 * post-norm layers under MPNet's names, no token types, positions counted from past the padding index ({@code
 * pad_token_id + 1}, as RoBERTa), and a relative position bias: {@code encoder.relative_attention_bias.weight}
 * ({@code relative_attention_num_buckets}, heads), looked up by the bucket of each key's offset from its query (T5's
 * bidirectional buckets, at most 128 apart) and added to every layer's attention scores. transformers' {@code
 * MPNetConfig} defaults ({@code vocab_size} 30527, {@code pad_token_id} 1, 32 buckets).
 */
final class MpnetFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            "embeddings.position_embeddings.weight",
            null,
            "embeddings.LayerNorm.",
            "encoder.layer.%d.",
            "attention.attn.q.",
            "attention.attn.k.",
            "attention.attn.v.",
            "attention.attn.o.",
            "attention.LayerNorm.",
            "intermediate.dense.",
            "output.dense.",
            "output.LayerNorm.");

    /** The relative position bias table, (buckets, heads). */
    static final String RELATIVE_BIAS = "encoder.relative_attention_bias.weight";

    /** The farthest offset with a bucket of its own scale (transformers' {@code max_distance}). */
    static final int MAX_DISTANCE = 128;

    @Override
    public List<String> modelTypes() {
        return List.of("mpnet");
    }

    @Override
    public String checkpointPrefix() {
        return "mpnet.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        return BertFamily.bertKeys(
                r,
                modelType,
                30527,
                0,
                r.integer("pad_token_id", 1) + 1,
                r.integer("relative_attention_num_buckets", 32),
                NAMES);
    }

    /**
     * The bucket of a key {@code relative} positions after its query (negative: before), as transformers' {@code
     * MPNetEncoder.relative_position_bucket}: half the buckets for keys before the query, half for keys after; within
     * each half exact offsets below a quarter of the buckets, then logarithmic up to {@link #MAX_DISTANCE}, computed in
     * float as PyTorch computes it.
     */
    static int bucket(int relative, int buckets) {
        int half = buckets / 2, ret = 0;
        int n = -relative;
        if (n < 0) ret += half;
        n = Math.abs(n);
        int maxExact = half / 2;
        if (n < maxExact) return ret + n;
        float scaled = (float) Math.log((float) n / maxExact)
                / (float) Math.log((double) MAX_DISTANCE / maxExact)
                * (half - maxExact);
        return ret + Math.min(maxExact + (int) scaled, half - 1);
    }
}
