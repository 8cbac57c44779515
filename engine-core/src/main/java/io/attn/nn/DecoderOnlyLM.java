package io.attn.nn;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoder-only (GPT-style) language model built from the engine's layers: token embedding plus positional encoding,
 * a stack of causal self-attention layers ({@code nn.TransformerEncoderLayer} weights and names), an optional final
 * LayerNorm, and a projection to the vocabulary, tied to the embedding or not.
 *
 * <pre>
 * x = embed(ids) + pos(positions);  x = layers.N(x, causal);  x = norm(x);  logits = lm_head(x)
 * </pre>
 *
 * State: {@code embed.weight (V, E)}, {@code pos.weight (max_len, E)} (learned positions only), {@code layers.N.*},
 * {@code norm.weight}/{@code norm.bias} (when {@code final_norm}), {@code lm_head.weight (V, E)} (absent, or equal to
 * {@code embed.weight}, when tied) and {@code lm_head.bias (V)} (optional: used when present). The embedding is not
 * scaled by {@code sqrt(E)}.
 *
 * <p>Runs incrementally against a key/value cache ({@link #graph}, {@link DecoderSession}): the graph for {@code L} new
 * tokens per sequence writes their keys and values into per-layer cache inputs and attends to the cache. Positions are
 * looked up per token (a table for sinusoidal positions too), so each sequence of a left-padded batch counts its own.
 * Immutable once loaded; thread-safe.
 */
public final class DecoderOnlyLM {
    private final DecoderOnlyConfig config;
    private final EncoderModel.Table embed, posWeights;
    private final Tensor posTable;
    private final Linear lmHead;
    private final boolean quantized;
    private final List<TransformerEncoderLayer> layers = new ArrayList<>();
    private final LayerNorm norm;

    private DecoderOnlyLM(DecoderOnlyConfig c, StateDict sd) {
        this.config = c;
        int e = c.layer().dModel(), v = c.vocabSize();
        embed = EncoderModel.Table.load(sd, "embed.weight", v, e);
        quantized = embed.table().dtype() == DType.I8 || sd.has("lm_head.weight_scale");
        posWeights = c.learnedPositions() ? EncoderModel.Table.load(sd, "pos.weight", c.maxLen(), e) : null;
        posTable = c.learnedPositions() ? null : sinusoidalTable(c.maxLen(), e);
        for (int i = 0; i < c.numLayers(); i++)
            layers.add(new TransformerEncoderLayer(sd, "layers." + i + ".", c.layer()));
        norm = c.finalNorm()
                ? LayerNorm.load(
                        sd, "norm.", e, c.layer().layerNormEps(), c.layer().bias())
                : null;
        boolean headBias = sd.has("lm_head.bias"); // optional, whatever the layers' bias
        if (c.tiedEmbeddings()) {
            if (embed.table().dtype() == DType.I8)
                throw AttnException.badInput(sd.source() + ": tied_embeddings is set but embed.weight is int8"
                        + " (attn quantize unties them: lm_head.weight is quantized as a projection)");
            if (sd.has("lm_head.weight")
                    && !java.util.Arrays.equals(
                            sd.take("lm_head.weight", v, e).data(),
                            embed.table().data()))
                throw AttnException.shape(
                        sd.source() + ": tied_embeddings is set but lm_head.weight differs from" + " embed.weight");
            lmHead = new Linear("lm_head", embed.table(), headBias ? sd.take("lm_head.bias", v) : null);
        } else lmHead = Linear.load(sd, "lm_head", "lm_head.weight", "lm_head.bias", e, v, headBias);
        sd.checkAllUsed();
    }

    /** Builds the model from {@code sd}; every tensor must be used, with the right shape. */
    public static DecoderOnlyLM load(DecoderOnlyConfig c, StateDict sd) {
        return new DecoderOnlyLM(c, sd);
    }

    /** Whether the weights are int8 ({@code attn quantize}): the projections run as int8 products. */
    public boolean quantized() {
        return quantized;
    }

    public DecoderOnlyConfig config() {
        return config;
    }

    public int numLayers() {
        return layers.size();
    }

    public int numHeads() {
        return config.layer().nhead();
    }

    public int headDim() {
        return config.layer().dModel() / config.layer().nhead();
    }

    /** Graph input names of layer {@code i}'s key and value caches. */
    public static String kCacheName(int i) {
        return "layers." + i + ".k_cache";
    }

    public static String vCacheName(int i) {
        return "layers." + i + ".v_cache";
    }

    /**
     * The graph for {@code len} new tokens of each of {@code batch} sequences against caches of {@code capacity} rows.
     *
     * <p>Inputs: {@code ids (B, L)} and {@code positions (B, L)} (integral values as float), {@code pos (1)}: the cache
     * row of the first new token, {@code key_padding (B, C)}: non-zero for cache rows a sequence must not see (left
     * padding, rows not yet written), and the caches {@link #kCacheName}/{@link #vCacheName} {@code (B, H, C, D)} of
     * every layer. With {@code len > 1} the attention is also causal with the top-left alignment, which is right only
     * when the new tokens start at cache row 0 (a prefill). Output: the logits of the last new token, {@code (B, 1,
     * V)}.
     */
    public Graph graph(int batch, int len, int capacity) {
        if (len > capacity) throw AttnException.shape(len + " tokens do not fit a cache of " + capacity + " rows");
        GraphBuilder g = new GraphBuilder();
        Forward f = new Forward(g, AttentionWeights.NONE);
        f.perToken(); // int8 layers: one activation scale per token, so cached and recomputed steps agree
        int h = numHeads(), d = headDim();
        Node ids = g.input("ids", batch, len);
        Node positions = g.input("positions", batch, len);
        Node pos = g.input("pos", 1);
        Node keyPadding = g.input("key_padding", batch, capacity);
        Masks masks = Masks.keyPadding(keyPadding, len > 1);
        Node x = g.add(
                embed.lookup(g, ids),
                posWeights != null
                        ? posWeights.lookup(g, positions)
                        : g.embedding(positions, g.constant("pos.weight", posTable)));
        for (int i = 0; i < layers.size(); i++) {
            TransformerEncoderLayer layer = layers.get(i);
            Node kc = g.input(kCacheName(i), batch, h, capacity, d);
            Node vc = g.input(vCacheName(i), batch, h, capacity, d);
            x = layer.forward(f, x, in -> layer.selfAttn().forwardCached(f, in, kc, vc, pos, masks));
        }
        if (len > 1) { // keep the last row only: a one-hot (B, 1, L) . x (B, L, E)
            float[] sel = new float[batch * len];
            for (int b = 0; b < batch; b++) sel[b * len + len - 1] = 1f;
            x = g.matmul(g.constant("select_last", Tensor.of(sel, batch, 1, len)), x);
        }
        if (norm != null) x = norm.forward(f, x);
        return g.build(lmHead.forward(f, x));
    }

    /** The sinusoidal table {@code (n, E)}: {@code PE[p, 2i] = sin(p w_i)}, {@code PE[p, 2i+1] = cos(p w_i)}. */
    static Tensor sinusoidalTable(int n, int e) {
        float[] t = new float[n * e];
        for (int p = 0; p < n; p++)
            for (int c = 0; c < e; c += 2) {
                double angle = p * Math.exp(-Math.log(10000.0) * c / e);
                t[p * e + c] = (float) Math.sin(angle);
                if (c + 1 < e) t[p * e + c + 1] = (float) Math.cos(angle);
            }
        return Tensor.of(t, n, e);
    }
}
