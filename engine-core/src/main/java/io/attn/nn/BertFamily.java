package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.List;

/**
 * BERT ({@code model_type} {@code bert}: BERT, MiniLM, bge, e5, gte-small and most sentence-transformers encoders),
 * read as transformers' {@code BertConfig} reads it: absolute positions from 0, token types.
 */
final class BertFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            "embeddings.position_embeddings.weight",
            "embeddings.token_type_embeddings.weight",
            "embeddings.LayerNorm.",
            "encoder.layer.%d.",
            "attention.self.query.",
            "attention.self.key.",
            "attention.self.value.",
            "attention.output.dense.",
            "attention.output.LayerNorm.",
            "intermediate.dense.",
            "output.dense.",
            "output.LayerNorm.");

    @Override
    public List<String> modelTypes() {
        return List.of("bert");
    }

    @Override
    public String checkpointPrefix() {
        return "bert.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        // JinaBERT: BERT's keys and names with ALiBi in place of the position table and a gated feed-forward
        if ("alibi".equals(r.string("position_embedding_type", "absolute"))) return JinaBert.read(r, modelType);
        checkAbsoluteEncoder(r);
        return bertKeys(r, modelType, 30522, r.integer("type_vocab_size", 2), 0, 0, NAMES);
    }

    /**
     * A config of BERT's keys ({@code vocab_size}, {@code hidden_size}, {@code num_hidden_layers}, {@code
     * num_attention_heads}, {@code intermediate_size}, {@code hidden_act}, {@code layer_norm_eps}, {@code
     * max_position_embeddings}) with transformers' BERT defaults (the vocabulary's the family's), and what the family
     * sets otherwise: the families that keep BERT's keys (RoBERTa's, MPNet) read through it.
     */
    static EncoderConfig bertKeys(
            JsonFields r,
            String modelType,
            int vocabSize,
            int typeVocabSize,
            int positionOffset,
            int buckets,
            Names names) {
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", vocabSize),
                r.integer("hidden_size", 768),
                r.integer("num_hidden_layers", 12),
                r.integer("num_attention_heads", 12),
                r.integer("intermediate_size", 3072),
                r.string("hidden_act", "gelu"),
                (float) r.number("layer_norm_eps", 1e-12),
                r.integer("max_position_embeddings", 512),
                typeVocabSize,
                positionOffset,
                buckets,
                names);
    }

    /** Absolute positions, an encoder (transformers' BERT-shaped configs can also describe decoders). */
    static void checkAbsoluteEncoder(JsonFields r) {
        String pos = r.string("position_embedding_type", "absolute");
        if (!pos.equals("absolute"))
            throw AttnException.badInput(
                    r.source() + ": position_embedding_type \"" + pos + "\" is not supported (only \"absolute\")");
        checkEncoder(r);
    }

    /** An encoder: transformers' BERT-shaped configs can also describe decoders. */
    static void checkEncoder(JsonFields r) {
        if (r.bool("is_decoder", false) || r.bool("add_cross_attention", false))
            throw AttnException.badInput(
                    r.source() + ": a decoder (is_decoder / add_cross_attention) is not supported: attn runs encoders");
    }
}
