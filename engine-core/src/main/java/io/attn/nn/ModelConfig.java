package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A model's configuration: {@code "module"} plus the PyTorch constructor arguments, as read from a config JSON or the
 * {@code config} entry of a safetensors file's metadata.
 *
 * <pre>
 * {"module":"MultiheadAttention","embed_dim":64,"num_heads":4,"bias":true}
 * {"module":"TransformerEncoderLayer","d_model":64,"nhead":4,"dim_feedforward":128,"activation":"gelu",
 *  "layer_norm_eps":1e-5,"norm_first":true}
 * TransformerDecoderLayer: the same keys.  TransformerEncoder / TransformerDecoder: plus "num_layers", "final_norm".
 * Transformer: d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward, activation, layer_norm_eps,
 *              norm_first (both final norms, as torch.nn.Transformer has them).
 * SelfAttention (the tutorials' single-head module): embed_size.
 * BertModel (Hugging Face transformers' BertModel, see {@link EncoderConfig}): vocab_size, hidden_size,
 *            num_hidden_layers, num_attention_heads, intermediate_size, hidden_act, layer_norm_eps,
 *            max_position_embeddings, type_vocab_size.
 * </pre>
 *
 * A Hugging Face {@code config.json} (a {@code "model_type"} and no {@code "module"}) is read by its family's reader
 * ({@link EncoderFamily#fromHuggingFace}: BERT, RoBERTa, XLM-RoBERTa, CamemBERT, DistilBERT), keys the engine does
 * not use ignored as transformers ignores them; such a config is of kind {@code BertModel} (a text encoder of BERT's
 * shape) and its {@link #arguments()} name its {@code model_type}.
 *
 * Missing keys take PyTorch's defaults, with one exception: {@code "batch_first"} (MultiheadAttention, the layers,
 * stacks and Transformer) defaults to {@code true}, attn's layout {@code (B, L, E)}; {@code "batch_first": false}
 * (PyTorch's default) takes and returns sequence-first {@code (L, B, E)}, as PyTorch does, and {@code
 * tools/export_torch.py} always writes the key. Unknown keys are an error (they usually mean a typo).
 *
 * @param batchFirst whether batched inputs and outputs are {@code (B, L, E)} (true) or {@code (L, B, E)} (false)
 */
public record ModelConfig(
        Kind kind,
        LayerConfig layer,
        int embedDim,
        int numHeads,
        boolean bias,
        int numLayers,
        boolean finalNorm,
        int numEncoderLayers,
        int numDecoderLayers,
        EncoderConfig encoder,
        boolean batchFirst,
        ClassifierHead head) {

    /** A batch-first config of any kind but {@code BertModel}. */
    public ModelConfig(
            Kind kind,
            LayerConfig layer,
            int embedDim,
            int numHeads,
            boolean bias,
            int numLayers,
            boolean finalNorm,
            int numEncoderLayers,
            int numDecoderLayers) {
        this(
                kind,
                layer,
                embedDim,
                numHeads,
                bias,
                numLayers,
                finalNorm,
                numEncoderLayers,
                numDecoderLayers,
                null,
                true,
                null);
    }

    /** This config with {@code batch_first} set. */
    public ModelConfig withBatchFirst(boolean b) {
        return new ModelConfig(
                kind,
                layer,
                embedDim,
                numHeads,
                bias,
                numLayers,
                finalNorm,
                numEncoderLayers,
                numDecoderLayers,
                encoder,
                b,
                head);
    }

    /** A {@code BertModel} config. */
    public static ModelConfig encoder(EncoderConfig c) {
        return encoder(c, null);
    }

    /** A {@code BertModel} config with a sequence-classification head (null: none). */
    public static ModelConfig encoder(EncoderConfig c, ClassifierHead head) {
        return new ModelConfig(
                Kind.BertModel,
                null,
                c.hiddenSize(),
                c.numAttentionHeads(),
                true,
                c.numHiddenLayers(),
                false,
                0,
                0,
                c,
                true,
                head);
    }

    /**
     * The config as the engine understands it: {@code "module"} and every constructor argument it reads, defaults
     * filled in, under PyTorch's (or, for {@code BertModel}, Hugging Face's) names.
     */
    public Map<String, Object> arguments() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("module", kind.name());
        switch (kind) {
            case MultiheadAttention -> {
                m.put("embed_dim", embedDim);
                m.put("num_heads", numHeads);
                m.put("bias", bias);
            }
            case SelfAttention -> m.put("embed_size", embedDim);
            case TransformerEncoderLayer, TransformerDecoderLayer -> layer.putArguments(m);
            case TransformerEncoder, TransformerDecoder -> {
                layer.putArguments(m);
                m.put("num_layers", numLayers);
                m.put("final_norm", finalNorm);
            }
            case Transformer -> {
                layer.putArguments(m);
                m.put("num_encoder_layers", numEncoderLayers);
                m.put("num_decoder_layers", numDecoderLayers);
            }
            case BertModel -> {
                if (!encoder.modelType().equals("bert")) m.put("model_type", encoder.modelType());
                m.put("vocab_size", encoder.vocabSize());
                m.put("hidden_size", encoder.hiddenSize());
                m.put("num_hidden_layers", encoder.numHiddenLayers());
                m.put("num_attention_heads", encoder.numAttentionHeads());
                m.put("intermediate_size", encoder.intermediateSize());
                m.put("hidden_act", encoder.hiddenAct());
                m.put("layer_norm_eps", Double.parseDouble(Float.toString(encoder.layerNormEps())));
                m.put("max_position_embeddings", encoder.maxPositionEmbeddings());
                m.put("type_vocab_size", encoder.typeVocabSize());
                if (encoder.positionOffset() != 0) m.put("first_position_id", encoder.positionOffset());
                if (encoder.alibi())
                    m.put("positions", "alibi: -slope_h |j - i| added to the scores (no position table)");
                if (encoder.relativeAttentionBuckets() > 0)
                    m.put(
                            "relative_attention_bias",
                            encoder.relativeAttentionBuckets() + " buckets (T5's, max distance "
                                    + MpnetFamily.MAX_DISTANCE + "), shared by the layers");
                EncoderConfig.Variant v = encoder.variant();
                if (v.rotary() != null) {
                    m.put("positions", "rotary");
                    m.put(
                            "rope_theta",
                            Double.parseDouble(Float.toString(v.rotary().theta())));
                    m.put("rotary_dims", v.rotary().dims());
                    if (v.rotary().scaling().kind() != io.attn.graph.OpParams.Rope.Scaling.Kind.NONE)
                        m.put("rope_scaling", v.rotary().scaling().describe());
                    m.put("head_dim", encoder.headDim());
                }
                EncoderConfig.Decoder dec = v.decoder();
                if (dec != null) {
                    EncoderConfig.Gemma gemma = dec.gemma();
                    m.put(
                            "architecture",
                            gemma == null
                                    ? "decoder: causal attention, pre-norm RMSNorm layers, final RMSNorm"
                                    : "decoder (Gemma 3): " + (dec.causal() ? "causal" : "bidirectional")
                                            + " attention, pre-norm RMSNorm layers with norms of the attention and"
                                            + " feed-forward outputs, RMSNorms scaling by 1 + weight, embeddings x "
                                            + gemma.embedScale() + ", final RMSNorm");
                    if (gemma != null) {
                        m.put("attention_scale", Double.parseDouble(Float.toString(gemma.attentionScale())));
                        m.put(
                                "local_rope_theta",
                                Double.parseDouble(
                                        Float.toString(gemma.localRotary().theta())));
                    }
                    m.put("num_key_value_heads", dec.kvHeads());
                    m.put(
                            "attention",
                            dec.kvHeads() == 1
                                    ? "multi-query (1 key/value head)"
                                    : dec.kvHeads() < encoder.numAttentionHeads()
                                            ? "grouped-query (" + encoder.numAttentionHeads() / dec.kvHeads()
                                                    + " query heads per key/value head)"
                                            : "multi-head");
                    m.put("qk_norm", dec.qkNorm());
                    if (dec.slidingWindow() > 0) {
                        String layersOf = "";
                        if (dec.windowedLayers() != null) {
                            List<Integer> on = new java.util.ArrayList<>();
                            for (int i = 0; i < dec.windowedLayers().size(); i++) if (dec.windowed(i)) on.add(i);
                            layersOf = " in layers " + on;
                        }
                        m.put(
                                "sliding_window",
                                dec.causal()
                                        ? "causal, i - " + dec.slidingWindow() + " < j <= i" + layersOf
                                        : "|i - j| <= " + dec.slidingWindow() / 2 + layersOf);
                    }
                }
                if (v.glu() != null)
                    m.put(
                            "feed_forward",
                            "gated: down("
                                    + (v.glu() == EncoderConfig.Glu.GATE_FIRST
                                            ? "act(h[:F]) * h[F:]"
                                            : "h[:F] * act(h[F:])")
                                    + "), act " + encoder.hiddenAct());
                if (encoder.names().key() == null) m.put("fused_qkv", true);
                if (encoder.names().queryNorm() != null)
                    m.put("qk_layernorm", "LayerNorm of the whole query and key projections before the heads split");
                if (encoder.names().secondAttentionNorm() != null)
                    m.put("second_attention_norm", "norm(x + attention_block(x)) after the attention block's own norm");
                if (v.preNorm() != null)
                    m.put("norm", "pre-norm (first layer's attention input not normalised), final norm");
                if (!v.normBias()) m.put("norm_bias", false);
                if (v.window() != null) {
                    List<String> types = new ArrayList<>();
                    for (boolean local : v.window().local()) types.add(local ? "sliding_attention" : "full_attention");
                    m.put("layer_types", types);
                    m.put("sliding_window", "|i - j| <= " + v.window().halfWindow());
                    m.put(
                            "local_rope_theta",
                            Double.parseDouble(
                                    Float.toString(v.window().rotary().theta())));
                }
                if (!v.equals(EncoderConfig.Variant.BERT)) {
                    m.put("qkv_bias", v.qkvBias());
                    m.put("attention_output_bias", v.outBias());
                    m.put("ffn_in_bias", v.ffnInBias());
                    m.put("ffn_out_bias", v.ffnOutBias());
                }
                if (head != null) {
                    m.put("num_labels", head.numLabels());
                    m.put("labels", head.labels());
                    m.put(
                            "classifier_reads",
                            switch (head.pool()) {
                                case FIRST -> "the first token";
                                case MEAN -> "the mean of the tokens";
                                case LAST ->
                                    head.padTokenId() < 0
                                            ? "the last token"
                                            : "the last token that is not the pad token (id " + head.padTokenId() + ")";
                            });
                }
            }
        }
        if (kind != Kind.SelfAttention && kind != Kind.BertModel) m.put("batch_first", batchFirst);
        return m;
    }

    /** Whether the model's input is token ids {@code (B, L)} rather than embeddings {@code (B, L, E)}. */
    public boolean takesTokenIds() {
        return kind == Kind.BertModel;
    }

    /** The model width E: every embedding input's last dimension (the hidden size of a token model). */
    public int width() {
        return layer != null ? layer.dModel() : embedDim;
    }

    /** The number of attention heads (of each attention block). */
    public int heads() {
        return layer != null ? layer.nhead() : numHeads;
    }

    /** The masks the module's PyTorch {@code forward} takes, by argument name (in a fixed order, for messages). */
    public List<String> maskArguments() {
        return switch (kind) {
            case MultiheadAttention, SelfAttention, TransformerEncoderLayer, TransformerEncoder ->
                List.of("attn_mask", "key_padding_mask");
            case TransformerDecoderLayer, TransformerDecoder ->
                List.of("tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask");
            case Transformer ->
                List.of(
                        "attn_mask",
                        "key_padding_mask",
                        "tgt_mask",
                        "memory_mask",
                        "tgt_key_padding_mask",
                        "memory_key_padding_mask");
            case BertModel -> List.of("key_padding_mask");
        };
    }

    /** Whether the module has a decoder's cross-attention over a memory (the encoder output). */
    public boolean takesMemory() {
        return switch (kind) {
            case TransformerDecoderLayer, TransformerDecoder, Transformer -> true;
            default -> false;
        };
    }

    /** The module kinds the engine runs. */
    public enum Kind {
        MultiheadAttention,
        SelfAttention,
        TransformerEncoderLayer,
        TransformerDecoderLayer,
        TransformerEncoder,
        TransformerDecoder,
        Transformer,
        BertModel
    }

    private static final Set<String> LAYER_KEYS = Set.of(
            "d_model",
            "nhead",
            "dim_feedforward",
            "activation",
            "layer_norm_eps",
            "norm_first",
            "bias",
            "dropout",
            "batch_first");

    /** Parses a config map (from JSON). {@code source} names the file in error messages. */
    public static ModelConfig parse(Map<String, Object> m, String source) {
        if (!m.containsKey("module") && m.containsKey("model_type")) {
            JsonFields r = new JsonFields(m, source);
            EncoderConfig ec = EncoderFamily.fromHuggingFace(r);
            return encoder(ec, ClassifierHead.fromHuggingFace(r, EncoderFamily.of(ec.modelType(), source)));
        }
        Object mod = m.get("module");
        if (mod == null)
            throw AttnException.badInput(source + ": not a model config: no \"model_type\" (a Hugging Face config.json;"
                    + " attn runs " + String.join(", ", EncoderFamily.supportedModelTypes()) + ") and no \"module\""
                    + " (attn's own configs: " + List.of(Kind.values()) + ")");
        if (!(mod instanceof String s))
            throw AttnException.badInput(
                    source + ": config has no \"module\" string (one of " + List.of(Kind.values()) + ")");
        if (s.equals(DecoderOnlyConfig.MODULE))
            throw AttnException.badInput(
                    source + ": a DecoderOnlyLM runs with `attn generate` (io.attn.nn.DecoderOnlyLM)");
        Kind kind;
        try {
            kind = Kind.valueOf(s);
        } catch (IllegalArgumentException e) {
            throw AttnException.badInput(
                    source + ": unknown module \"" + s + "\" (expected one of " + List.of(Kind.values()) + ")");
        }
        JsonFields r = new JsonFields(m, source);
        r.allow("module");
        ModelConfig c =
                switch (kind) {
                    case MultiheadAttention -> {
                        r.allow("embed_dim", "num_heads", "bias", "dropout", "batch_first");
                        int e = r.integer("embed_dim", -1);
                        int h = r.integer("num_heads", -1);
                        if (e <= 0 || h <= 0)
                            throw AttnException.badInput(
                                    source + ": MultiheadAttention needs positive embed_dim and num_heads");
                        if (e % h != 0)
                            throw AttnException.badInput(
                                    source + ": embed_dim " + e + " is not divisible by num_heads " + h);
                        yield new ModelConfig(kind, null, e, h, r.bool("bias", true), 0, false, 0, 0);
                    }
                    case SelfAttention -> {
                        r.allow("embed_size");
                        int e = r.integer("embed_size", -1);
                        if (e <= 0)
                            throw AttnException.badInput(source + ": SelfAttention needs a positive embed_size");
                        yield new ModelConfig(kind, null, e, 1, true, 0, false, 0, 0);
                    }
                    case TransformerEncoderLayer, TransformerDecoderLayer -> {
                        r.allow(LAYER_KEYS);
                        yield new ModelConfig(kind, layer(r), 0, 0, true, 0, false, 0, 0);
                    }
                    case TransformerEncoder, TransformerDecoder -> {
                        r.allow(LAYER_KEYS);
                        r.allow("num_layers", "final_norm", "enable_nested_tensor");
                        int n = r.integer("num_layers", -1);
                        if (n <= 0) throw AttnException.badInput(source + ": " + kind + " needs a positive num_layers");
                        yield new ModelConfig(kind, layer(r), 0, 0, true, n, r.bool("final_norm", false), 0, 0);
                    }
                    case Transformer -> {
                        r.allow(LAYER_KEYS);
                        r.allow("num_encoder_layers", "num_decoder_layers");
                        yield new ModelConfig(
                                kind,
                                layer(r),
                                0,
                                0,
                                true,
                                0,
                                true,
                                r.integer("num_encoder_layers", 6),
                                r.integer("num_decoder_layers", 6));
                    }
                    case BertModel -> {
                        r.allow(
                                "vocab_size",
                                "hidden_size",
                                "num_hidden_layers",
                                "num_attention_heads",
                                "intermediate_size",
                                "hidden_act",
                                "layer_norm_eps",
                                "max_position_embeddings",
                                "type_vocab_size");
                        int vocab = r.integer("vocab_size", 30522),
                                hidden = r.integer("hidden_size", 768),
                                layers = r.integer("num_hidden_layers", 12),
                                heads = r.integer("num_attention_heads", 12),
                                inter = r.integer("intermediate_size", 3072);
                        String act = r.string("hidden_act", "gelu");
                        float eps = (float) r.number("layer_norm_eps", 1e-12);
                        int positions = r.integer("max_position_embeddings", 512),
                                types = r.integer("type_vocab_size", 2);
                        try {
                            yield encoder(EncoderConfig.bert(
                                    vocab, hidden, layers, heads, inter, act, eps, positions, types));
                        } catch (AttnException e) {
                            throw new AttnException(e.code(), source + ": " + e.getMessage());
                        }
                    }
                };
        r.checkNoUnknown("module " + s);
        return c.kind == Kind.SelfAttention || c.kind == Kind.BertModel
                ? c
                : c.withBatchFirst(r.bool("batch_first", true));
    }

    private static LayerConfig layer(JsonFields r) {
        int dModel = r.integer("d_model", 512), nhead = r.integer("nhead", 8), ff = r.integer("dim_feedforward", 2048);
        String activation = r.string("activation", "relu");
        float eps = (float) r.number("layer_norm_eps", 1e-5);
        boolean normFirst = r.bool("norm_first", false), bias = r.bool("bias", true);
        try {
            return new LayerConfig(dModel, nhead, ff, activation, eps, normFirst, bias);
        } catch (AttnException e) {
            throw new AttnException(e.code(), r.source() + ": " + e.getMessage());
        }
    }
}
