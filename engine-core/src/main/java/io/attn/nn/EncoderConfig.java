package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.OpParams;

/**
 * A Hugging Face text encoder's configuration, whatever its family ({@link EncoderFamily}): its sizes, feed-forward
 * activation, position scheme and the names of its weights. The BERT module form of a config JSON reads the same keys:
 * {@code {"module":"BertModel","vocab_size":30522,"hidden_size":384,"num_hidden_layers":6,
 * "num_attention_heads":12,"intermediate_size":1536,"hidden_act":"gelu","layer_norm_eps":1e-12,
 * "max_position_embeddings":512,"type_vocab_size":2}}.
 *
 * @param modelType the family's {@code model_type} ({@code bert}, {@code xlm-roberta}, {@code distilbert}, ...)
 * @param hiddenAct {@code gelu} (exact, erf form), {@code gelu_new} / {@code gelu_pytorch_tanh} (tanh approximation)
 *     or {@code relu}
 * @param typeVocabSize token types (segments); 0 for a family without token-type embeddings
 * @param positionOffset the position id of a sequence's first token: 0, or {@code pad_token_id + 1} for RoBERTa's
 *     family and MPNet (whose positions count from past the padding index)
 * @param relativeAttentionBuckets MPNet's relative position buckets ({@code relative_attention_num_buckets}): a bias
 *     per head and bucket added to every layer's attention scores; {@link #ALIBI} for ALiBi's linear bias by distance
 *     (JinaBERT's {@code position_embedding_type: alibi}); 0 for none
 * @param variant what a rotary, gated family does otherwise than BERT ({@link Variant#BERT} for BERT's shape)
 */
public record EncoderConfig(
        String modelType,
        int vocabSize,
        int hiddenSize,
        int numHiddenLayers,
        int numAttentionHeads,
        int intermediateSize,
        String hiddenAct,
        float layerNormEps,
        int maxPositionEmbeddings,
        int typeVocabSize,
        int positionOffset,
        int relativeAttentionBuckets,
        EncoderFamily.Names names,
        Variant variant) {
    /**
     * Rotary positions (rotate-half layout, transformers' {@code rotate_half}) in place of a position table: the first
     * {@code dims} of each head's query and key rotate, with base {@code theta} and the frequencies' {@code scaling}.
     */
    public record Rotary(float theta, int dims, OpParams.Rope.Scaling scaling) {
        public Rotary {
            java.util.Objects.requireNonNull(scaling, "scaling");
        }

        /** Unscaled frequencies. */
        public Rotary(float theta, int dims) {
            this(theta, dims, OpParams.Rope.Scaling.NONE);
        }
    }

    /**
     * Pre-norm layers as ModernBERT's: {@code x = x + attn(norm_a(x)); x = x + ffn(norm_f(x))}, the first layer's
     * {@code norm_a} the identity (transformers' {@code nn.Identity()} for layer 0), and a final norm after the last
     * layer.
     *
     * @param finalNorm the final norm's weight prefix ({@code final_norm.})
     */
    public record PreNorm(String finalNorm) {}

    /**
     * Alternating global and sliding-window local attention (ModernBERT): the layers marked local attend to keys within
     * {@code halfWindow} positions on either side ({@code |i - j| <= halfWindow}, transformers' {@code local_attention
     * / 2}), with their own rotary settings.
     *
     * @param local per layer, whether it is local (sliding window); the others attend to every key
     * @param rotary the local layers' rotary positions (their theta); the global layers use {@link Variant#rotary}
     */
    public record SlidingWindow(java.util.List<Boolean> local, int halfWindow, Rotary rotary) {
        public SlidingWindow {
            local = java.util.List.copyOf(local);
            if (halfWindow < 0) throw AttnException.badInput("local_attention must be >= 0, got " + 2 * halfWindow);
            if (rotary == null) throw new IllegalArgumentException("the local layers' rotary settings are missing");
        }

        /** Whether layer {@code i} is local. */
        public boolean isLocal(int i) {
            return local.get(i);
        }
    }

    /**
     * What GTE, NomicBERT and ModernBERT do otherwise than BERT's layers.
     *
     * @param rotary rotary positions instead of {@code position_embeddings}; null for a position table
     * @param glu a gated feed-forward block: the first projection gives 2F values, {@code act(gate) * up} of its two
     *     halves ({@link Glu}); null for BERT's {@code act(dense_1(x))}
     * @param qkvBias biases on the query, key and value projections
     * @param outBias bias on the attention output projection
     * @param ffnInBias bias on the feed-forward's first projection
     * @param ffnOutBias bias on its second
     * @param preNorm pre-norm layers and a final norm ({@link PreNorm}); null for post-norm (BERT's)
     * @param normBias whether the LayerNorms have a bias ({@code norm_bias}; BERT's do)
     * @param window alternating global and sliding-window layers; null when every layer is global
     * @param decoder a decoder embedder's settings (Qwen3, Qwen2, Mistral, Llama: {@link DecoderModel}); null for an
     *     encoder
     */
    public record Variant(
            Rotary rotary,
            Glu glu,
            boolean qkvBias,
            boolean outBias,
            boolean ffnInBias,
            boolean ffnOutBias,
            PreNorm preNorm,
            boolean normBias,
            SlidingWindow window,
            Decoder decoder) {
        /** BERT's layers: a position table, {@code act(dense_1(x))}, every projection with its bias. */
        public static final Variant BERT = new Variant(null, null, true, true, true, true);

        /** Post-norm layers with biased LayerNorms, every layer global. */
        public Variant(
                Rotary rotary, Glu glu, boolean qkvBias, boolean outBias, boolean ffnInBias, boolean ffnOutBias) {
            this(rotary, glu, qkvBias, outBias, ffnInBias, ffnOutBias, null, true, null, null);
        }

        /** An encoder's variant (ModernBERT's pre-norm, bias-free norms and sliding windows). */
        public Variant(
                Rotary rotary,
                Glu glu,
                boolean qkvBias,
                boolean outBias,
                boolean ffnInBias,
                boolean ffnOutBias,
                PreNorm preNorm,
                boolean normBias,
                SlidingWindow window) {
            this(rotary, glu, qkvBias, outBias, ffnInBias, ffnOutBias, preNorm, normBias, window, null);
        }

        /** A decoder embedder's variant ({@link DecoderModel} has its own pre-norm RMSNorm layers). */
        public Variant(
                Rotary rotary,
                Glu glu,
                boolean qkvBias,
                boolean outBias,
                boolean ffnInBias,
                boolean ffnOutBias,
                Decoder decoder) {
            this(rotary, glu, qkvBias, outBias, ffnInBias, ffnOutBias, null, true, null, decoder);
        }
    }

    /**
     * What a decoder embedder ({@link DecoderModel}: causal (but a bidirectional Gemma), pre-norm RMSNorm layers, no
     * embedding norm, a final norm) has besides an encoder's settings. {@code layerNormEps} is its {@code rms_norm_eps}.
     *
     * @param kvHeads key/value heads ({@code num_key_value_heads}): a divisor of the attention heads (grouped-query
     *     attention; 1: multi-query)
     * @param headDim the size of each head ({@code head_dim}; Qwen3's need not be hidden / heads)
     * @param qkNorm an RMSNorm of each query and key head before the rotation (Qwen3's {@code q_norm}, {@code k_norm})
     * @param finalNorm the name prefix of the final RMSNorm ({@code norm.})
     * @param slidingWindow {@code sliding_window}: query i sees keys {@code i - slidingWindow < j <= i} in the windowed
     *     layers (a window rule in the attention op, O(L x window)), or, bidirectional ({@link Gemma#bidirectional}),
     *     {@code |i - j| <= slidingWindow / 2}; 0 for no window
     * @param windowedLayers which layers take the window (Qwen's from {@code max_window_layers}, or {@code layer_types};
     *     Gemma's {@code sliding_attention} layers, kept when the window is 0 for their rope); null: every layer
     *     (Mistral)
     * @param gemma what Gemma 3's text model does otherwise ({@link Gemma}); null for the others
     */
    public record Decoder(
            int kvHeads,
            int headDim,
            boolean qkNorm,
            String finalNorm,
            int slidingWindow,
            java.util.List<Boolean> windowedLayers,
            Gemma gemma) {
        public Decoder {
            if (slidingWindow < 0)
                throw AttnException.badInput("sliding_window must be positive, got " + slidingWindow);
            if (windowedLayers != null) windowedLayers = java.util.List.copyOf(windowedLayers);
        }

        /** A decoder of the Llama shape (no {@link Gemma} settings). */
        public Decoder(
                int kvHeads,
                int headDim,
                boolean qkNorm,
                String finalNorm,
                int slidingWindow,
                java.util.List<Boolean> windowedLayers) {
            this(kvHeads, headDim, qkNorm, finalNorm, slidingWindow, windowedLayers, null);
        }

        /** The window in every layer (0: none). */
        public Decoder(int kvHeads, int headDim, boolean qkNorm, String finalNorm, int slidingWindow) {
            this(kvHeads, headDim, qkNorm, finalNorm, slidingWindow, null);
        }

        /** Every layer attends to every earlier key. */
        public Decoder(int kvHeads, int headDim, boolean qkNorm, String finalNorm) {
            this(kvHeads, headDim, qkNorm, finalNorm, 0);
        }

        /** Whether layer {@code i} attends through the sliding window. */
        public boolean windowed(int i) {
            return slidingWindow > 0 && (windowedLayers == null || windowedLayers.get(i));
        }

        /**
         * Whether layer {@code i} is a {@code sliding_attention} layer ({@link #windowedLayers}; with none, every layer
         * when there is a window), whether or not its window cuts (Gemma's such layers have a rope of their own).
         */
        public boolean slidingLayer(int i) {
            return windowedLayers != null ? windowedLayers.get(i) : slidingWindow > 0;
        }

        /** Whether the attention is causal (every decoder's but a bidirectional Gemma's). */
        public boolean causal() {
            return gemma == null || !gemma.bidirectional();
        }
    }

    /**
     * What Gemma 3's text model ({@code gemma3_text}: transformers' {@code Gemma3TextModel}, EmbeddingGemma) does besides
     * a decoder's settings ({@link GemmaFamily}): the embeddings scaled by {@code embedScale}; four RMSNorms per layer,
     * each scaling by {@code 1 + weight} (the input norm, a norm of the attention's output before the residual, the
     * feed-forward's pre-norm and a norm of its output); the scores scaled by {@code query_pre_attn_scalar^-0.5}; the
     * {@code sliding_attention} layers with rotary positions of their own.
     *
     * @param embedScale {@code sqrt(hidden_size)}, as float32 (transformers' {@code embed_scale} buffer)
     * @param attentionScale the scores' scale, {@code query_pre_attn_scalar^-0.5}
     * @param bidirectional {@code use_bidirectional_attention} (EmbeddingGemma): no causal mask; the sliding window then
     *     {@code |i - j| <= sliding_window / 2} (transformers' {@code |i - j| < sliding_window // 2 + 1})
     * @param localRotary the rotary positions of the {@code sliding_attention} layers ({@link Decoder#slidingLayer};
     *     {@code rope_local_base_freq}), whether or not the window cuts; the others take {@link Variant#rotary}
     */
    public record Gemma(float embedScale, float attentionScale, boolean bidirectional, Rotary localRotary) {
        public Gemma {
            java.util.Objects.requireNonNull(localRotary, "localRotary");
        }
    }

    /** The size of each attention head: {@link Decoder#headDim} for a decoder, else hidden / heads. */
    public int headDim() {
        return variant.decoder() != null ? variant.decoder().headDim() : hiddenSize / numAttentionHeads;
    }

    /** Which half of a gated feed-forward's first projection (2F outputs) goes through the activation. */
    public enum Glu {
        /** {@code act(h[..., :F]) * h[..., F:]}: the weight is [gate; up] (NomicBERT's fc12 then fc11). */
        GATE_FIRST,
        /** {@code h[..., :F] * act(h[..., F:])}: [up; gate] (GTE's {@code up_gate_proj}). */
        GATE_SECOND
    }

    /** A config of BERT's shape ({@link Variant#BERT}). */
    public EncoderConfig(
            String modelType,
            int vocabSize,
            int hiddenSize,
            int numHiddenLayers,
            int numAttentionHeads,
            int intermediateSize,
            String hiddenAct,
            float layerNormEps,
            int maxPositionEmbeddings,
            int typeVocabSize,
            int positionOffset,
            int relativeAttentionBuckets,
            EncoderFamily.Names names) {
        this(
                modelType,
                vocabSize,
                hiddenSize,
                numHiddenLayers,
                numAttentionHeads,
                intermediateSize,
                hiddenAct,
                layerNormEps,
                maxPositionEmbeddings,
                typeVocabSize,
                positionOffset,
                relativeAttentionBuckets,
                names,
                Variant.BERT);
    }

    public EncoderConfig {
        positive("vocab_size", vocabSize);
        positive("hidden_size", hiddenSize);
        positive("num_hidden_layers", numHiddenLayers);
        positive("num_attention_heads", numAttentionHeads);
        positive("intermediate_size", intermediateSize);
        positive("max_position_embeddings", maxPositionEmbeddings);
        if (typeVocabSize < 0) throw AttnException.badInput("type_vocab_size must be >= 0, got " + typeVocabSize);
        if (positionOffset < 0 || positionOffset >= maxPositionEmbeddings)
            throw AttnException.badInput("the first position id " + positionOffset
                    + " (pad_token_id + 1) is outside max_position_embeddings " + maxPositionEmbeddings);
        if (relativeAttentionBuckets < ALIBI || relativeAttentionBuckets == 1)
            throw AttnException.badInput(
                    "relative_attention_num_buckets must be 0 or at least 2, got " + relativeAttentionBuckets);
        if (variant == null) throw new IllegalArgumentException("variant is null");
        Decoder dec = variant.decoder();
        if (dec == null && hiddenSize % numAttentionHeads != 0)
            throw AttnException.badInput(
                    "hidden_size " + hiddenSize + " is not divisible by num_attention_heads " + numAttentionHeads);
        if (dec != null) {
            positive("head_dim", dec.headDim());
            if (dec.kvHeads() <= 0 || numAttentionHeads % dec.kvHeads() != 0)
                throw AttnException.badInput("num_attention_heads " + numAttentionHeads
                        + " is not a multiple of num_key_value_heads " + dec.kvHeads());
        }
        if (!(layerNormEps > 0)) throw AttnException.badInput("layer_norm_eps must be positive, got " + layerNormEps);
        if (variant.glu() != null) gluActivation(hiddenAct); // validates
        else activation(hiddenAct);
        Rotary rot = variant.rotary();
        if (rot != null) {
            int d = dec != null ? dec.headDim() : hiddenSize / numAttentionHeads;
            if (rot.dims() < 2 || rot.dims() % 2 != 0 || rot.dims() > d)
                throw AttnException.badInput("the rotary dims " + rot.dims() + " must be even, at least 2 and at most"
                        + " the head size " + d);
            if (!(rot.theta() > 0) || Float.isInfinite(rot.theta()))
                throw AttnException.badInput("rope_theta must be positive, got " + rot.theta());
        }
        if (variant.window() != null) {
            if (variant.window().local().size() != numHiddenLayers)
                throw AttnException.badInput("layer_types names "
                        + variant.window().local().size() + " layers, num_hidden_layers is " + numHiddenLayers);
            if (rot == null) throw new IllegalArgumentException("sliding-window layers need rotary positions");
        }
    }

    /** The activation of a gated feed-forward's gate named by {@code hidden_act}. */
    static OpParams.Glu.Activation gluActivation(String hiddenAct) {
        return switch (hiddenAct) {
            case "silu", "swish" -> OpParams.Glu.Activation.SILU;
            case "gelu" -> OpParams.Glu.Activation.GELU;
            case "gelu_new", "gelu_pytorch_tanh" -> OpParams.Glu.Activation.GELU_TANH;
            case null -> throw AttnException.badInput("hidden_act is missing");
            default ->
                throw AttnException.badInput("hidden_act \"" + hiddenAct
                        + "\" is not supported for a gated feed-forward (silu, swish, gelu, gelu_new,"
                        + " gelu_pytorch_tanh)");
        };
    }

    /** A BERT config (the names of transformers' {@code BertModel}, positions from 0). */
    public static EncoderConfig bert(
            int vocabSize,
            int hiddenSize,
            int numHiddenLayers,
            int numAttentionHeads,
            int intermediateSize,
            String hiddenAct,
            float layerNormEps,
            int maxPositionEmbeddings,
            int typeVocabSize) {
        return new EncoderConfig(
                "bert",
                vocabSize,
                hiddenSize,
                numHiddenLayers,
                numAttentionHeads,
                intermediateSize,
                hiddenAct,
                layerNormEps,
                maxPositionEmbeddings,
                typeVocabSize,
                0,
                0,
                EncoderFamily.BERT.names());
    }

    /**
     * {@link #relativeAttentionBuckets} of a model with ALiBi's bias: {@code -slope_h |j - i|} added to head h's score
     * of query i and key j, the slopes of ALiBi's paper ({@link EncoderModel#alibiSlopes}), no position table.
     */
    public static final int ALIBI = -1;

    /** Whether the attention scores take ALiBi's linear bias by distance ({@link #ALIBI}). */
    public boolean alibi() {
        return relativeAttentionBuckets == ALIBI;
    }

    /** The most tokens one sequence may have: the positions past the offset. */
    public int maxTokens() {
        return maxPositionEmbeddings - positionOffset;
    }

    /** The feed-forward activation named by {@code hidden_act}. */
    static FeedForward.Activation activation(String hiddenAct) {
        return switch (hiddenAct) {
            case "gelu" -> FeedForward.Activation.GELU;
            case "gelu_new", "gelu_pytorch_tanh" -> FeedForward.Activation.GELU_TANH;
            case "relu" -> FeedForward.Activation.RELU;
            case null -> throw AttnException.badInput("hidden_act is missing");
            default ->
                throw AttnException.badInput(
                        "hidden_act \"" + hiddenAct + "\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)");
        };
    }

    private static void positive(String key, int v) {
        if (v <= 0) throw AttnException.badInput(key + " must be positive, got " + v);
    }
}
