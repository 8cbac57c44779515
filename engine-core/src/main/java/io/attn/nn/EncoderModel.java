package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * A Hugging Face text encoder of BERT's shape in eval mode, without its pooler: transformers' {@code BertModel},
 * {@code XLMRobertaModel} / {@code RobertaModel} / {@code CamembertModel}, {@code DistilBertModel} and {@code
 * MPNetModel}, the encoders of most sentence-embedding models. The family ({@link EncoderFamily}) names the weights and
 * the first position id; MPNet adds a relative position bias to every layer's scores (fed as the attention mask
 * {@link #POSITION_BIAS} of kind {@link io.attn.graph.MaskKind#RELATIVE}, {@code (H, 2L - 1)}, with the key-padding
 * mask or in a ragged batch).
 *
 * <pre>
 * x = LayerNorm(word_embeddings[ids] (+ token_type_embeddings[types]) + position_embeddings[offset + positions])
 * each layer (post-norm):  x = LN_a(x + dense_o(attention(query(x), key(x), value(x), padding)))
 *                          x = LN_o(x + dense_2(act(dense_1(x))))
 * </pre>
 *
 * BERT's names (without the {@code bert.} prefix): {@code embeddings.word_embeddings.weight (V, E)}, {@code
 * embeddings.position_embeddings.weight (P, E)}, {@code embeddings.token_type_embeddings.weight (T, E)}, {@code
 * embeddings.LayerNorm.{weight,bias}}, and for each layer N {@code encoder.layer.N.attention.self.{query,key,
 * value}.*}, {@code .attention.output.dense.*}, {@code .attention.output.LayerNorm.*}, {@code .intermediate.dense.*}
 * {@code (F, E)}, {@code .output.dense.*} {@code (E, F)}, {@code .output.LayerNorm.*}. The other families' are in their
 * {@link EncoderFamily.Names}.
 *
 * <p>Graph inputs: {@code input} ids {@code (B, L)}, {@code positions (B, L)} (with the family's offset) and, for a
 * family with token types, {@code token_types (B, L)} (integral values stored as float), and optionally {@code
 * key_padding_mask (B, L)}, non-zero = padding (transformers' {@code attention_mask == 0}); or, instead of padding, a
 * ragged batch: {@code (1, T)} holding sequences of given lengths one after another, each attending only to itself
 * (positions restart at each sequence). Output: the last hidden state {@code (B, L, E)}. transformers adds the padding
 * mask as the most negative float; attn masks those keys out, which is the same softmax whenever a row keeps one key
 * (the first token is never padding). Immutable once loaded; thread-safe.
 */
public final class EncoderModel {
    /** Names of the extra graph inputs. */
    public static final String POSITIONS = "positions", TOKEN_TYPES = "token_types";

    private final EncoderConfig config;
    private final Table word, position, tokenType;
    private final float[] relativeBias; // (buckets, H), MPNet's; null for the other families
    private final float[] alibiSlopes; // (H), ALiBi's (JinaBERT); null for the other families
    private final LayerNorm embeddingNorm, finalNorm; // finalNorm: pre-norm families' (null otherwise)
    private final List<TransformerEncoderLayer> layers = new ArrayList<>();

    public EncoderModel(StateDict sd, EncoderConfig c) {
        this.config = c;
        EncoderFamily.Names n = c.names();
        EncoderConfig.Variant v = c.variant();
        int e = c.hiddenSize(), f = c.intermediateSize(), h = c.numAttentionHeads();
        word = Table.load(sd, n.word(), c.vocabSize(), e);
        position = v.rotary() != null || n.position() == null
                ? null
                : Table.load(sd, n.position(), c.maxPositionEmbeddings(), e);
        tokenType = n.tokenType() == null || c.typeVocabSize() == 0
                ? null
                : Table.load(sd, n.tokenType(), c.typeVocabSize(), e);
        embeddingNorm = LayerNorm.load(sd, n.embeddingNorm(), e, c.layerNormEps(), v.normBias());
        finalNorm = v.preNorm() == null
                ? null
                : LayerNorm.load(sd, v.preNorm().finalNorm(), e, c.layerNormEps(), v.normBias());
        alibiSlopes = c.alibi() ? alibiSlopes(h) : null;
        relativeBias = c.relativeAttentionBuckets() <= 0
                ? null
                : sd.take(MpnetFamily.RELATIVE_BIAS, c.relativeAttentionBuckets(), h)
                        .data();
        LayerConfig lc = new LayerConfig(e, h, f, "gelu", c.layerNormEps(), v.preNorm() != null, true);
        if (n == JinaBert.NAMES
                && c.numHiddenLayers() > 0
                && !sd.has(n.layer(0) + n.ffnIn() + "weight")
                && sd.has(n.layer(0) + JinaBert.CODE_NAMES.ffnIn() + "weight"))
            throw AttnException.badInput(sd.source() + ": the weights are jina-bert-v2-qk-post-norm's ("
                    + n.layer(0) + JinaBert.CODE_NAMES.ffnIn() + "weight: jina-embeddings-v2-base-code's architecture),"
                    + " but config.json's _name_or_path is not \"" + JinaBert.QK_POST_NORM + "\", which tells the"
                    + " two apart (as text-embeddings-inference reads it): set it so");
        for (int i = 0; i < c.numHiddenLayers(); i++) {
            String p = n.layer(i);
            Linear q, k, val;
            String attnName = p + n.query().substring(0, n.query().indexOf('.'));
            if (n.key() == null) { // one fused (3E, E) projection (float or int8), split into query, key and value
                Linear qkvLayer = Linear.load(sd, p + n.query(), e, 3 * e, v.qkvBias());
                String qkv = p + n.query().substring(0, n.query().length() - 1);
                q = qkvLayer.outputs(qkv + ".q", 0, e);
                k = qkvLayer.outputs(qkv + ".k", e, 2 * e);
                val = qkvLayer.outputs(qkv + ".v", 2 * e, 3 * e);
            } else {
                q = Linear.load(sd, p + n.query(), e, e, v.qkvBias());
                k = Linear.load(sd, p + n.key(), e, e, v.qkvBias());
                val = Linear.load(sd, p + n.value(), e, e, v.qkvBias());
            }
            MultiheadAttention attn = new MultiheadAttention(
                    attnName,
                    e,
                    h,
                    q,
                    k,
                    val,
                    Linear.load(sd, p + n.attentionOutput(), e, e, v.outBias()),
                    n.queryNorm() == null
                            ? null
                            : LayerNorm.load(sd, p + n.queryNorm(), e, c.layerNormEps(), v.normBias()),
                    n.keyNorm() == null
                            ? null
                            : LayerNorm.load(sd, p + n.keyNorm(), e, c.layerNormEps(), v.normBias()));
            FeedForward ff = feedForward(sd, p, c);
            if (n.secondAttentionNorm() != null) {
                layers.add(new TransformerEncoderLayer(
                        lc,
                        attn,
                        ff,
                        LayerNorm.load(sd, p + n.attentionNorm(), e, c.layerNormEps(), v.normBias()),
                        LayerNorm.load(sd, p + n.secondAttentionNorm(), e, c.layerNormEps(), v.normBias()),
                        LayerNorm.load(sd, p + n.ffnNorm(), e, c.layerNormEps(), v.normBias())));
                continue;
            }
            layers.add(new TransformerEncoderLayer(
                    lc,
                    attn,
                    ff,
                    // a pre-norm family's first layer takes its input as it is (ModernBERT: attn_norm = Identity)
                    v.preNorm() != null && i == 0
                            ? null
                            : LayerNorm.load(sd, p + n.attentionNorm(), e, c.layerNormEps(), v.normBias()),
                    LayerNorm.load(sd, p + n.ffnNorm(), e, c.layerNormEps(), v.normBias())));
        }
    }

    /**
     * Layer {@code p}'s feed-forward block under the family's names: {@code act(dense_1(x))}, or gated from one (2F,
     * E) projection, or from separate up and gate projections loaded as one [gate; up] (2F, E) matmul, the gate half
     * activated. Shared by the encoders and {@link DecoderModel}.
     */
    static FeedForward feedForward(StateDict sd, String p, EncoderConfig c) {
        EncoderFamily.Names n = c.names();
        EncoderConfig.Variant v = c.variant();
        int e = c.hiddenSize(), f = c.intermediateSize();
        FeedForward.Activation act = v.glu() == null ? EncoderConfig.activation(c.hiddenAct()) : null;
        OpParams.Glu glu = v.glu() == null
                ? null
                : new OpParams.Glu(EncoderConfig.gluActivation(c.hiddenAct()), v.glu() == EncoderConfig.Glu.GATE_FIRST);
        Linear in;
        if (glu == null) in = Linear.load(sd, p + n.ffnIn(), e, f, v.ffnInBias());
        else if (n.ffnGate() == null) in = Linear.load(sd, p + n.ffnIn(), e, 2 * f, v.ffnInBias());
        else {
            Linear up = Linear.load(sd, p + n.ffnIn(), e, f, v.ffnInBias());
            Linear gate = Linear.load(sd, p + n.ffnGate(), e, f, v.ffnInBias());
            in = Linear.concat(up.name() + "+gate", gate, up); // float or int8
        }
        return new FeedForward(in, Linear.load(sd, p + n.ffnOut(), f, e, v.ffnOutBias()), act, glu);
    }

    /**
     * An embedding table: float, or int8 with {@code <name>_scale} and {@code <name>_zero_point} (one each, as ONNX
     * Runtime's dynamic quantization keeps them), looked up by {@link io.attn.graph.Op#QEMBEDDING}; a float table may
     * carry a task's low-rank adapter ({@code <layer>.lora_A} {@code (rows, r)}, looked up as a table of its own, and
     * {@code <layer>.lora_B} {@code (e, r)}, LoRA's scaling in it: {@code y = W[ids] + A[ids] B^T}), kept apart from a
     * table that several tasks' models share ({@code TaskAdapters.Mode.SHARE}).
     */
    record Table(String name, Tensor table, float scale, int zeroPoint, Linear.Lora lora) {
        Table(String name, Tensor table, float scale, int zeroPoint) {
            this(name, table, scale, zeroPoint, null);
        }

        static Table load(StateDict sd, String name, int rows, int e) {
            String layer = name.endsWith(".weight") ? name.substring(0, name.length() - ".weight".length()) : null;
            boolean adapted = layer != null && (sd.has(layer + Linear.LORA_A) || sd.has(layer + Linear.LORA_B));
            if (!sd.has(name + "_scale")) {
                Tensor t = sd.take(name, rows, e);
                if (!adapted) return new Table(name, t, 0f, 0);
                if (!sd.has(layer + Linear.LORA_A) || !sd.has(layer + Linear.LORA_B))
                    throw AttnException.shape(sd.source() + ": " + layer + " has " + Linear.LORA_A + " or "
                            + Linear.LORA_B + " without the other");
                Tensor a = sd.takeAny(layer + Linear.LORA_A);
                int r = a.rank() == 2 && a.dim(0) == rows ? a.dim(1) : -1;
                if (r <= 0 || a.dtype() != io.attn.tensor.DType.F32)
                    throw AttnException.shape(sd.source() + ": tensor '" + layer + Linear.LORA_A + "' is " + a.dtype()
                            + a.shape() + ", expected float (" + rows + ", r)");
                return new Table(name, t, 0f, 0, new Linear.Lora(a, sd.take(layer + Linear.LORA_B, e, r)));
            }
            if (adapted)
                throw AttnException.shape(sd.source() + ": " + layer + " has a LoRA adapter beside an int8 table"
                        + " (adapters run beside float weights only)");
            Tensor t = sd.takeInt8(name, rows, e);
            Tensor scale = sd.take(name + "_scale", 1);
            Tensor zero = sd.takeAny(name + "_zero_point");
            if (zero.dtype() != io.attn.tensor.DType.I8 || zero.size() != 1)
                throw AttnException.shape(sd.source() + ": " + name + "_zero_point is " + zero.dtype() + zero.shape()
                        + ", expected one int8");
            return new Table(name, t, scale.data()[0], zero.int8()[0]);
        }

        Node lookup(GraphBuilder g, Node ids) {
            if (table.dtype() == io.attn.tensor.DType.I8) return g.qembedding(ids, table, scale, zeroPoint);
            if (lora == null) return g.embedding(ids, g.constant(name, table));
            Node low = g.embedding(ids, g.constant(name + Linear.LORA_A, lora.a()));
            low = g.linear(low, g.constant(name + Linear.LORA_B, lora.b()), null);
            return g.add(g.embedding(ids, g.constant(name, table)), low);
        }
    }

    public EncoderConfig config() {
        return config;
    }

    /**
     * Name of the graph input that carries MPNet's relative position bias {@code (H, 2L - 1)}, an attention mask of kind
     * {@link io.attn.graph.MaskKind#RELATIVE}.
     */
    public static final String POSITION_BIAS = "position_bias";

    /** Whether the graph takes {@link #POSITION_BIAS} (MPNet's buckets or ALiBi's slopes). */
    public boolean takesPositionBias() {
        return relativeBias != null || alibiSlopes != null;
    }

    /**
     * ALiBi's slopes for {@code heads} heads, as its paper's code (and JinaBERT's, and text-embeddings-inference's)
     * computes them in double precision: for a power of two n, {@code start^(i + 1)} with {@code start = 2^(-2^-(log2 n
     * - 3))} (so 2^-8/n ... 2^-8 in geometric steps); otherwise those of the largest power of two below, then every
     * other slope of twice that power, until there are {@code heads}. Rounded to float, as {@code torch.Tensor(list)}
     * rounds them.
     */
    static float[] alibiSlopes(int heads) {
        double[] d = new double[heads];
        int pow2 = Integer.highestOneBit(heads);
        double[] base = slopesPowerOf2(pow2);
        System.arraycopy(base, 0, d, 0, pow2);
        if (pow2 != heads) {
            double[] twice = slopesPowerOf2(2 * pow2);
            for (int i = 0; i < heads - pow2; i++) d[pow2 + i] = twice[2 * i];
        }
        float[] out = new float[heads];
        for (int i = 0; i < heads; i++) out[i] = (float) d[i];
        return out;
    }

    /**
     * ALiBi's bias for sequences of up to {@code len} tokens, {@code (H, 2 len - 1)}: {@code -slope_h |d|} at element
     * {@code d + len - 1}, in float as the models' torch code computes it (the negated float slope times the distance).
     */
    static Tensor alibiBias(float[] slopes, int len) {
        int h = slopes.length, n = 2 * len - 1;
        float[] out = new float[h * n];
        for (int k = 0; k < h; k++) {
            float neg = -slopes[k];
            for (int d = -(len - 1); d < len; d++) out[k * n + d + len - 1] = neg * (float) Math.abs(d);
        }
        return Tensor.of(out, h, n);
    }

    private static double[] slopesPowerOf2(int n) {
        double start = Math.pow(2, -Math.pow(2, -(Integer.numberOfTrailingZeros(n) - 3))); // n a power of two
        double[] s = new double[n];
        for (int i = 0; i < n; i++) s[i] = start * Math.pow(start, i);
        return s;
    }

    /**
     * The relative position bias for sequences of up to {@code len} tokens, {@code (H, 2 len - 1)}; ALiBi's is {@code
     * -slope_h |d|} at element {@code d + len - 1}. MPNet's: element {@code
     * [h, j - i + len - 1]} is the table's value for head h in the row of the bucket of {@code j - i} ({@link
     * MpnetFamily#bucket}), which the attention op adds to the score of query i and key j ({@link
     * io.attn.graph.MaskKind#RELATIVE}). transformers computes the (1, H, L, L) bias once per forward from the
     * positions {@code 0..L-1} and adds it to every layer's scores; these are its {@code 2L - 1} diagonals. A ragged
     * batch of T tokens takes {@code positionBias(T)}: the offsets within each sequence are among those of the whole.
     */
    public Tensor positionBias(int len) {
        int h = config.numAttentionHeads(), buckets = config.relativeAttentionBuckets(), n = 2 * len - 1;
        float[] out = new float[h * n];
        if (alibiSlopes != null) return alibiBias(alibiSlopes, len);
        for (int d = -(len - 1); d < len; d++) {
            int row = MpnetFamily.bucket(d, buckets) * h;
            for (int k = 0; k < h; k++) out[k * n + d + len - 1] = relativeBias[row + k];
        }
        return Tensor.of(out, h, n);
    }

    /** Whether the graph takes {@link #TOKEN_TYPES}. */
    public boolean takesTokenTypes() {
        return tokenType != null;
    }

    /**
     * The last hidden state {@code (B, L, E)} of token ids {@code (B, L)}; {@code tokenTypes} null for a family without
     * them; {@code masks}: a key-padding mask, none, or a ragged batch ({@link Masks#segments}: the L tokens of each
     * row are several sequences, each attending to itself).
     */
    public Node forward(Forward f, Node ids, Node positions, Node tokenTypes, Masks masks) {
        GraphBuilder g = f.builder();
        if (ids.shape().rank() != 2)
            throw AttnException.shape("token ids have shape " + ids.shape() + ": expected (B, L) or (L)");
        int len = masks.segments() == null
                ? ids.shape().dim(1)
                : java.util.Arrays.stream(masks.segments()).max().orElse(0);
        if (len > config.maxTokens())
            throw AttnException.shape("a sequence of " + len + " tokens is longer than the model's "
                    + config.maxTokens() + " positions (max_position_embeddings"
                    + (config.positionOffset() > 0 ? " less the first position id " + config.positionOffset() : "")
                    + ")");
        EncoderFamily.Names n = config.names();
        f.segments(masks.segments());
        f.padding(masks.keyPaddingKind() == io.attn.graph.MaskKind.BOOL ? masks.keyPadding() : null);
        Node x = word.lookup(g, ids);
        if (tokenType != null) x = g.add(x, tokenType.lookup(g, tokenTypes));
        if (position != null) x = g.add(x, position.lookup(g, positions));
        x = embeddingNorm.forward(f, x);
        EncoderConfig.Variant v = config.variant();
        EncoderConfig.SlidingWindow window = v.window();
        for (int i = 0; i < layers.size(); i++) {
            TransformerEncoderLayer l = layers.get(i);
            // a local layer: keys within the half window on either side (a rule, not an (L, S) mask), its own theta
            boolean local = window != null && window.isLocal(i);
            EncoderConfig.Rotary rotary = local ? window.rotary() : v.rotary();
            Masks m = local ? masks.window(window.halfWindow(), window.halfWindow()) : masks;
            x = rotary == null
                    ? l.forward(f, x, m)
                    : l.forward(f, x, h -> l.selfAttn().forwardRotary(f, h, m, rotary, positions));
        }
        return finalNorm == null ? x : finalNorm.forward(f, x);
    }
}
