package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A family of Hugging Face text encoders that share {@link EncoderModel}'s forward (embeddings, then post-norm layers
 * of self-attention and a feed-forward block): how its {@code config.json} reads, with the defaults of its {@code
 * transformers} config class, and what its weights are called. The one place where a {@code model_type} picks a
 * family ({@link #of}). Adding a family of this shape is a small class and its parity case against transformers.
 */
public interface EncoderFamily {
    /**
     * The weight names, relative to the model (no task-model prefix): the embeddings', then per layer {@code layer}
     * (a format with the layer index, e.g. {@code encoder.layer.%d.}) followed by each block's prefix.
     *
     * @param position null for a family with rotary positions
     * @param tokenType null for a family without token-type embeddings
     * @param key null when {@code query} names one fused projection (3E, E) of query, key and value, in that order
     *     (GTE's {@code qkv_proj}, NomicBERT's {@code Wqkv}); {@code value} null then too
     * @param ffnIn the feed-forward's first projection; in a gated family (2F, E) [up; gate] when {@code ffnGate} is
     *     null, else (F, E) the up projection alone
     * @param ffnGate a gated family's separate gate projection (F, E), concatenated as [gate; up] with {@code ffnIn}
     *     when loaded; null otherwise
     * @param queryNorm a LayerNorm (E) of the whole query projection before the heads split (jina-bert-v2-qk-post-norm's
     *     {@code layer_norm_q}); null for none
     * @param keyNorm likewise of the key projection ({@code layer_norm_k}); null for none
     * @param secondAttentionNorm a post-norm layer's second norm of the attention block: {@code x = norm(x_in +
     *     attentionNorm(x_in + attention))} (jina-bert-v2-qk-post-norm's {@code layer_norm_1}); null for none
     */
    record Names(
            String word,
            String position,
            String tokenType,
            String embeddingNorm,
            String layer,
            String query,
            String key,
            String value,
            String attentionOutput,
            String attentionNorm,
            String ffnIn,
            String ffnOut,
            String ffnNorm,
            String ffnGate,
            String queryNorm,
            String keyNorm,
            String secondAttentionNorm) {
        /** The names of a family without full-width q/k norms or a second attention norm. */
        public Names(
                String word,
                String position,
                String tokenType,
                String embeddingNorm,
                String layer,
                String query,
                String key,
                String value,
                String attentionOutput,
                String attentionNorm,
                String ffnIn,
                String ffnOut,
                String ffnNorm,
                String ffnGate) {
            this(
                    word,
                    position,
                    tokenType,
                    embeddingNorm,
                    layer,
                    query,
                    key,
                    value,
                    attentionOutput,
                    attentionNorm,
                    ffnIn,
                    ffnOut,
                    ffnNorm,
                    ffnGate,
                    null,
                    null,
                    null);
        }

        /** The names of a family with no separate gate projection. */
        public Names(
                String word,
                String position,
                String tokenType,
                String embeddingNorm,
                String layer,
                String query,
                String key,
                String value,
                String attentionOutput,
                String attentionNorm,
                String ffnIn,
                String ffnOut,
                String ffnNorm) {
            this(
                    word,
                    position,
                    tokenType,
                    embeddingNorm,
                    layer,
                    query,
                    key,
                    value,
                    attentionOutput,
                    attentionNorm,
                    ffnIn,
                    ffnOut,
                    ffnNorm,
                    null);
        }

        String layer(int i) {
            return layer.formatted(i);
        }
    }

    /** The {@code model_type} values of the family, the first its own. */
    List<String> modelTypes();

    /** The prefix of the encoder's weights inside a task model's checkpoint ({@code bert.}, {@code roberta.}, ...). */
    String checkpointPrefix();

    /**
     * Every prefix a task model of this family is saved under, the first {@link #checkpointPrefix}: GTE's remote-code
     * models say {@code new.}, transformers' own {@code GteForSequenceClassification} {@code gte.}.
     */
    default List<String> checkpointPrefixes() {
        return List.of(checkpointPrefix());
    }

    Names names();

    /** The config from a {@code config.json}'s keys ({@code r}), whose {@code model_type} is {@code modelType}. */
    EncoderConfig read(JsonFields r, String modelType);

    EncoderFamily BERT = new BertFamily();
    EncoderFamily ROBERTA = new RobertaFamily();
    EncoderFamily DISTILBERT = new DistilBertFamily();
    EncoderFamily MPNET = new MpnetFamily();
    EncoderFamily GTE = new GteFamily();
    EncoderFamily NOMIC_BERT = new NomicBertFamily();
    EncoderFamily MODERNBERT = new ModernBertFamily();
    EncoderFamily QWEN3 = DecoderFamily.QWEN3;
    EncoderFamily QWEN2 = DecoderFamily.QWEN2;
    EncoderFamily MISTRAL = DecoderFamily.MISTRAL;
    EncoderFamily LLAMA = DecoderFamily.LLAMA;
    EncoderFamily GEMMA3 = new GemmaFamily();
    EncoderFamily JINA_V3 = new JinaV3Family();

    /** Every family the engine runs: the encoders, then the decoder embedders ({@link DecoderModel}). */
    List<EncoderFamily> ALL = List.of(
            BERT,
            ROBERTA,
            DISTILBERT,
            MPNET,
            GTE,
            NOMIC_BERT,
            MODERNBERT,
            JINA_V3,
            QWEN3,
            QWEN2,
            MISTRAL,
            LLAMA,
            GEMMA3);

    /** Every {@code model_type} the engine runs. */
    static List<String> supportedModelTypes() {
        List<String> out = new ArrayList<>();
        for (EncoderFamily f : ALL) out.addAll(f.modelTypes());
        return out;
    }

    /**
     * The family of {@code modelType}.
     *
     * @throws AttnException BAD_INPUT naming {@code source} and the supported types
     */
    static EncoderFamily of(String modelType, String source) {
        for (EncoderFamily f : ALL) if (f.modelTypes().contains(modelType)) return f;
        throw AttnException.badInput(source + ": model_type \"" + modelType + "\" is not supported (attn runs "
                + String.join(", ", supportedModelTypes()) + ")");
    }

    /**
     * A config from a Hugging Face {@code config.json}: the family its {@code model_type} names reads it. Keys the
     * engine does not use are ignored, as transformers keeps them without effect on inference.
     */
    static EncoderConfig fromHuggingFace(JsonFields r) {
        String type = r.string("model_type", null);
        if (type == null)
            throw AttnException.badInput(
                    r.source() + ": no \"model_type\" (a Hugging Face config.json names its family)");
        if (!supportedModelTypes().contains(type) && r.map().containsKey("auto_map"))
            throw AttnException.badInput(r.source() + ": model_type \"" + type + "\" comes with its own Python code"
                    + " (auto_map), and attn runs no remote code: it runs "
                    + String.join(", ", supportedModelTypes()));
        EncoderFamily f = of(type, r.source());
        try {
            return f.read(r, type);
        } catch (AttnException e) {
            if (e.getMessage().startsWith(r.source())) throw e;
            throw new AttnException(e.code(), r.source() + ": " + e.getMessage());
        }
    }

    /** What a sentence embedding does not use: pooler, task heads, the position-ids buffer. */
    List<String> NOT_ENCODER = List.of(
            "pooler.",
            "cls.",
            "classifier.",
            "pre_classifier.",
            "qa_outputs.",
            "lm_head.",
            "vocab_transform.",
            "vocab_layer_norm.",
            "vocab_projector.",
            "embeddings.position_ids",
            "embeddings.token_type_ids",
            "head.", // ModernBERT's masked-LM head and decoder
            "decoder.");

    /**
     * A checkpoint's tensors under the encoder's names: the family's task-model prefix ({@code bert.}, {@code
     * roberta.}, ...) removed, {@code gamma}/{@code beta} (old TensorFlow checkpoints) read as LayerNorm {@code
     * weight}/{@code bias}, and what the encoder does not use ({@link #NOT_ENCODER}) dropped. Anything else is kept, so
     * the model names it if it does not fit.
     *
     * @throws AttnException BAD_INPUT when a tensor appears both with and without the prefix
     */
    static Map<String, Tensor> encoderWeights(EncoderFamily family, Map<String, Tensor> raw, String source) {
        return encoderWeights(family, raw, source, List.of());
    }

    /** {@link #encoderWeights(EncoderFamily, Map, String)}, keeping the tensors under {@code keep} (a head's). */
    static Map<String, Tensor> encoderWeights(
            EncoderFamily family, Map<String, Tensor> raw, String source, List<String> keep) {
        String prefix = family.checkpointPrefix();
        boolean prefixed = false;
        for (String p : family.checkpointPrefixes()) {
            String word = p + family.names().word();
            if (raw.keySet().stream().anyMatch(k -> k.startsWith(p + "embeddings.") || k.equals(word))) {
                prefix = p;
                prefixed = true;
                break;
            }
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (var e : raw.entrySet()) {
            String k = e.getKey();
            if (prefixed && k.startsWith(prefix)) k = k.substring(prefix.length());
            String key = k;
            if (NOT_ENCODER.stream().anyMatch(key::startsWith) && keep.stream().noneMatch(key::startsWith)) continue;
            if (k.endsWith(".gamma")) k = k.substring(0, k.length() - 6) + ".weight";
            else if (k.endsWith(".beta")) k = k.substring(0, k.length() - 5) + ".bias";
            if (out.put(k, e.getValue()) != null)
                throw AttnException.badInput(source + ": tensor '" + k + "' appears twice (with and without a prefix)");
        }
        return out;
    }
}
