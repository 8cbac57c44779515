package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.List;

/**
 * jina-embeddings-v3 ({@code model_type} {@code jina_embeddings_v3}, transformers' {@code JinaEmbeddingsV3Model}):
 * XLM-RoBERTa's post-norm layers and vocabulary with rotary positions in place of the position table (rotate-half,
 * {@code rope_parameters.rope_theta}, 20000 by default; no position offset), one fused {@code mixer.Wqkv} (3E, E) with
 * biases, {@code mlp.fc1} / {@code mlp.fc2} with {@code hidden_act} (exact GELU) between them, and one token type.
 * The weight names are those {@code save_pretrained} writes (transformers converts them back to the hub's names:
 * {@code emb_ln}, {@code encoder.layers.N.mixer.Wqkv}, {@code norm1}, {@code norm2}), under {@code roberta.} in a
 * task model. Defaults of transformers' {@code JinaEmbeddingsV3Config}.
 *
 * <p>The hub's own folder (jinaai/jina-embeddings-v3, written for its remote code) says {@code model_type} {@code
 * xlm-roberta} with {@code position_embedding_type} {@code rotary} and {@code rotary_emb_base}: the same model under
 * the same names ({@link #readHub}), its weights parametrized with the five task LoRA adapters that {@link
 * TaskAdapters} merges when the model loads.
 */
final class JinaV3Family implements EncoderFamily {
    static final Names NAMES = new Names(
            "embeddings.word_embeddings.weight",
            null,
            "embeddings.token_type_embeddings.weight",
            "emb_ln.",
            "encoder.layers.%d.",
            "mixer.Wqkv.",
            null,
            null,
            "mixer.out_proj.",
            "norm1.",
            "mlp.fc1.",
            "mlp.fc2.",
            "norm2.");

    @Override
    public List<String> modelTypes() {
        return List.of("jina_embeddings_v3");
    }

    @Override
    public String checkpointPrefix() {
        return "roberta.";
    }

    @Override
    public Names names() {
        return NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        return config(r, modelType, GteFamily.Rope.read(r, 20000.0, null).unscaled(r, "jina-embeddings-v3"));
    }

    /**
     * The hub's config of jina-embeddings-v3 ({@code xlm-roberta} with {@code position_embedding_type} {@code rotary}):
     * the base of the rotary positions is its {@code rotary_emb_base}, required (the remote code's config class has a
     * default of its own; attn does not guess it).
     */
    static EncoderConfig readHub(JsonFields r, String modelType) {
        if (!(r.get("rotary_emb_base") instanceof Number))
            throw AttnException.badInput(r.source() + ": position_embedding_type \"rotary\" needs rotary_emb_base (a"
                    + " number; jina-embeddings-v3's is 20000.0), got " + r.get("rotary_emb_base"));
        if (r.get("rope_scaling") != null || r.get("rope_parameters") != null)
            throw AttnException.badInput(r.source() + ": rope_scaling / rope_parameters with position_embedding_type"
                    + " \"rotary\" are not supported (attn runs jina-embeddings-v3's plain rotary positions)");
        return config(r, modelType, new GteFamily.Rope(r.number("rotary_emb_base", 0), 1.0));
    }

    private static EncoderConfig config(JsonFields r, String modelType, GteFamily.Rope rope) {
        BertFamily.checkEncoder(r);
        int hidden = r.integer("hidden_size", 1024), heads = r.integer("num_attention_heads", 16);
        return new EncoderConfig(
                modelType,
                r.integer("vocab_size", 250002),
                hidden,
                r.integer("num_hidden_layers", 24),
                heads,
                r.integer("intermediate_size", 4096),
                r.string("hidden_act", "gelu"),
                (float) r.number("layer_norm_eps", 1e-5),
                r.integer("max_position_embeddings", 8194),
                r.integer("type_vocab_size", 1),
                0,
                0,
                NAMES,
                new EncoderConfig.Variant(rope.rotary(hidden, heads), null, true, true, true, true));
    }
}
