package io.attn.nn;

import io.attn.io.JsonFields;
import java.util.List;

/**
 * DistilBERT ({@code model_type} {@code distilbert}; multi-qa-distilbert, msmarco-distilbert): BERT's post-norm layers
 * under its own names and config keys ({@code dim}, {@code n_layers}, {@code n_heads}, {@code hidden_dim}, {@code
 * activation}), no token types, LayerNorm eps fixed at 1e-12, positions from 0 (learned, or the sinusoidal table
 * that transformers stores in the same weight when {@code sinusoidal_pos_embds} is set).
 */
final class DistilBertFamily implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            "embeddings.position_embeddings.weight",
            null,
            "embeddings.LayerNorm.",
            "transformer.layer.%d.",
            "attention.q_lin.",
            "attention.k_lin.",
            "attention.v_lin.",
            "attention.out_lin.",
            "sa_layer_norm.",
            "ffn.lin1.",
            "ffn.lin2.",
            "output_layer_norm.");

    @Override
    public List<String> modelTypes() {
        return List.of("distilbert");
    }

    @Override
    public String checkpointPrefix() {
        return "distilbert.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 30522),
                r.integer("dim", 768),
                r.integer("n_layers", 6),
                r.integer("n_heads", 12),
                r.integer("hidden_dim", 3072),
                r.string("activation", "gelu"),
                1e-12f,
                r.integer("max_position_embeddings", 512),
                0,
                0,
                0,
                NAMES);
    }
}
