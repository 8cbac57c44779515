package io.attn.nn;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.AttentionWeights;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.io.SafeTensors;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleConsumer;

/**
 * A loaded model: a {@link ModelConfig}, its modules with their weights, and the graphs built for the signatures it has
 * been called with ({@link GraphCache}). It runs calls already checked and laid out by its caller (the public API's
 * {@code ModuleCalls} checks a request against the module's PyTorch {@code forward}): feeds in the graph's layout,
 * named as {@link Signature} says.
 *
 * <p>Thread-safe: {@link #run} may be called from many threads at once. Close the model to release its resources
 * (device buffers on GPU backends); the backend itself belongs to the caller.
 */
public final class Model implements AutoCloseable {
    private final ModelConfig config;
    private final Root root;
    /** Whether the weights hold int8 tensors (QMATMUL layers: ragged batches need uneven row groups). */
    private final boolean quantized;

    private final GraphCache graphs = new GraphCache();

    /** The outputs of one call, in the graph's layout: the model output, then the attention weights of each block. */
    public record Outputs(Tensor output, List<String> weightBlocks, List<Tensor> weights) {}

    /** The modules a config builds, one shape per kind. */
    private sealed interface Root {
        record Attention(MultiheadAttention m) implements Root {}

        record Single(SelfAttention s) implements Root {}

        record EncoderLayer(TransformerEncoderLayer l) implements Root {}

        record DecoderLayer(TransformerDecoderLayer l) implements Root {}

        record Encoders(TransformerEncoder e) implements Root {}

        record Decoder(TransformerDecoder d) implements Root {}

        record Both(TransformerEncoder encoder, TransformerDecoder decoder) implements Root {}

        /** A text encoder; {@code head} its sequence-classification head, or null. */
        record Encoder(EncoderModel m, ClassifierHead.Loaded head) implements Root {}

        /**
         * A decoder's transformer (causal, or bidirectional as EmbeddingGemma's); {@code head} its sequence-classification
         * head (on the last non-pad token), or null.
         */
        record CausalEncoder(DecoderModel m, ClassifierHead.Loaded head) implements Root {}
    }

    private Model(ModelConfig config, Root root, boolean quantized) {
        this.config = config;
        this.root = root;
        this.quantized = quantized;
    }

    /** Builds the model's layers from {@code sd}; every tensor must be used, with the right shape. */
    public static Model load(ModelConfig c, StateDict sd) {
        Root root =
                switch (c.kind()) {
                    case MultiheadAttention ->
                        new Root.Attention(new MultiheadAttention(sd, "", c.embedDim(), c.numHeads(), c.bias()));
                    case SelfAttention -> new Root.Single(new SelfAttention(sd, "", c.embedDim()));
                    case TransformerEncoderLayer ->
                        new Root.EncoderLayer(new TransformerEncoderLayer(sd, "", c.layer()));
                    case TransformerDecoderLayer ->
                        new Root.DecoderLayer(new TransformerDecoderLayer(sd, "", c.layer()));
                    case TransformerEncoder ->
                        new Root.Encoders(new TransformerEncoder(sd, "", c.layer(), c.numLayers(), c.finalNorm()));
                    case TransformerDecoder ->
                        new Root.Decoder(new TransformerDecoder(sd, "", c.layer(), c.numLayers(), c.finalNorm()));
                    case Transformer ->
                        new Root.Both(
                                new TransformerEncoder(sd, "encoder.", c.layer(), c.numEncoderLayers(), true),
                                new TransformerDecoder(sd, "decoder.", c.layer(), c.numDecoderLayers(), true));
                    case BertModel -> {
                        if (c.encoder().variant().decoder() != null)
                            yield new Root.CausalEncoder(
                                    new DecoderModel(sd, c.encoder()),
                                    c.head() == null ? null : ClassifierHead.Loaded.load(c.head(), sd, c.encoder()));
                        EncoderModel m = new EncoderModel(sd, c.encoder());
                        ClassifierHead.Loaded head =
                                c.head() == null ? null : ClassifierHead.Loaded.load(c.head(), sd, c.encoder());
                        yield new Root.Encoder(m, head);
                    }
                };
        sd.checkAllUsed();
        return new Model(c, root, sd.hasInt8());
    }

    /**
     * Loads a model exported from PyTorch: {@code weights} is a safetensors file with the module's {@code state_dict()};
     * the config is read as {@link ConfigFiles#read} says.
     *
     * @throws io.attn.AttnException BAD_INPUT / SHAPE_MISMATCH naming the file and the problem
     */
    public static Model load(Path weights, Path config) {
        SafeTensors.File f = SafeTensors.read(weights);
        ConfigFiles.Read c = ConfigFiles.read(f, weights, config);
        return load(ModelConfig.parse(c.json(), c.source()), new StateDict(f.tensors(), weights.toString()));
    }

    public ModelConfig config() {
        return config;
    }

    /** Whether {@link #close} has been called. */
    public boolean isClosed() {
        return graphs.isClosed();
    }

    /**
     * Whether this model runs ragged batches on {@code backend}: a token model (but a classifier that pools by the mean)
     * on a backend that runs them ({@link #supportsRaggedBatches(Backend)}).
     */
    public boolean runsRaggedBatches(Backend backend) {
        return (root instanceof Root.Encoder && paddedOnly() == null || root instanceof Root.CausalEncoder)
                && supportsRaggedBatches(backend)
                && (!quantized || supportsRaggedInt8(backend));
    }

    /**
     * Whether {@code backend} runs int8 products over row groups of different sizes (a quantized model's ragged batch:
     * each sequence quantized on its own); both backends do (the CUDA backend since its {@code qparams_f32} and {@code
     * qquantize_f32} take where each group starts).
     */
    private static boolean supportsRaggedInt8(Backend backend) {
        GraphBuilder g = new GraphBuilder();
        Node x = g.input("x", 3, 2);
        Tensor w = Tensor.ofInt8(new byte[] {1, 2, 3, 4}, 2, 2);
        return backend.supports(g.qmatmul(x, w, new float[] {1f}, new byte[] {0}, new int[] {1, 2}));
    }

    /** Why this encoder takes padded batches only, not ragged ones; null when it takes both. */
    private String paddedOnly() {
        if (!(root instanceof Root.Encoder(EncoderModel _, var h))) return null;
        String type = config.encoder().modelType();
        // a head that pools by the mean: in a padded row its sum over the tokens starts at the row's first token
        // whatever the batch holds (bitwise the same in any batch); in a ragged row it would not
        if (h != null && h.head().mean())
            return type + " classifier pools by the mean of the tokens: it takes padded batches, not ragged ones";
        return null;
    }

    /**
     * Whether {@code backend} runs the ragged batches of token models (its fused attention over sequences laid one
     * after another).
     */
    public static boolean supportsRaggedBatches(Backend backend) {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, 3, 4);
        return backend.supports(g.attention(q, q, q, 0.5f, MaskSpec.segments(false, 1, 2), null, null));
    }

    /**
     * Runs an embeddings model: {@code feeds} holds {@code input} (and {@code memory}, {@code target}, the masks) as
     * {@code signature} describes them.
     */
    public Outputs run(Backend backend, Signature signature, Map<String, Tensor> feeds, DoubleConsumer progress) {
        if (config.takesTokenIds()) throw new IllegalStateException(config.kind() + " takes token ids: runTokens");
        return execute(backend, signature, feeds, progress);
    }

    /**
     * Runs a token model on ids {@code (B, L)}: padded with a bool key-padding mask {@code (B, L)} (non-zero =
     * padding; may be null), or a ragged batch {@code (1, T)} of sequences of the lengths {@code segments}. The model
     * feeds its positions itself, and its token types when {@code tokenTypes} is null (all 0). A model with a
     * classification head returns each sequence's logits, {@code (B, C)} or, ragged, {@code (N, C)} for N sequences;
     * the others the last hidden state.
     */
    public Outputs runTokens(
            Backend backend,
            Tensor ids,
            Tensor tokenTypes,
            Tensor keyPadding,
            List<Integer> segments,
            AttentionWeights weights,
            DoubleConsumer progress) {
        if (!config.takesTokenIds()) throw new IllegalStateException(config.kind() + " takes embeddings: run");
        EncoderModel encoder = root instanceof Root.Encoder e ? e.m() : null; // null: a decoder embedder
        String padded = segments == null ? null : paddedOnly();
        if (padded != null) throw AttnException.badInput(padded);
        int b = ids.dim(0), len = ids.dim(1);
        float[] positions = new float[b * len];
        int first = config.encoder().positionOffset();
        if (segments != null) {
            int at = 0;
            for (int n : segments) for (int l = 0; l < n; l++) positions[at++] = first + l;
        } else for (int i = 0; i < b; i++) for (int l = 0; l < len; l++) positions[i * len + l] = first + l;
        Map<String, Signature.MaskSig> masks = new HashMap<>();
        Map<String, Tensor> feeds = new HashMap<>();
        if (keyPadding != null) {
            masks.put(KEY_PADDING, new Signature.MaskSig(keyPadding.shape(), true));
            feeds.put(KEY_PADDING, keyPadding);
        }
        if (encoder != null && encoder.takesPositionBias()) {
            Tensor bias = encoder.positionBias(len);
            masks.put(EncoderModel.POSITION_BIAS, new Signature.MaskSig(bias.shape(), false));
            feeds.put(EncoderModel.POSITION_BIAS, bias);
        }
        feeds.put("input", ids);
        feeds.put(EncoderModel.POSITIONS, Tensor.of(positions, b, len));
        if (config.encoder().typeVocabSize() > 0)
            feeds.put(EncoderModel.TOKEN_TYPES, tokenTypes != null ? tokenTypes : Tensor.zeros(b, len));
        ClassifierHead.Loaded head =
                switch (root) {
                    case Root.Encoder e -> e.head();
                    case Root.CausalEncoder d -> d.head();
                    default -> null;
                };
        if (head != null)
            feeds.put(
                    ClassifierHead.SELECT,
                    switch (head.head().pool()) {
                        case MEAN -> meanTokens(b, len, keyPadding);
                        case FIRST -> firstTokens(b, len, segments);
                        case LAST ->
                            lastTokens(ids, segments, keyPadding, head.head().padTokenId());
                    });
        Signature s = new Signature(ids.shape(), null, null, masks, false, false, weights, segments);
        Outputs out = execute(backend, s, feeds, progress);
        if (head == null) return out;
        Tensor y = out.output(); // (B, 1, C) padded, (1, N, C) ragged
        return new Outputs(
                y.reshape(segments != null ? segments.size() : b, head.head().numLabels()),
                out.weightBlocks(),
                out.weights());
    }

    /**
     * The one-hot rows that pick each sequence's first token: padded {@code (B, 1, L)} (position 0 of each row),
     * ragged {@code (1, N, T)} (each sequence's start).
     */
    private static Tensor firstTokens(int b, int len, List<Integer> segments) {
        if (segments == null) {
            float[] sel = new float[b * len];
            for (int i = 0; i < b; i++) sel[i * len] = 1f;
            return Tensor.of(sel, b, 1, len);
        }
        int n = segments.size();
        float[] sel = new float[n * len];
        int at = 0;
        for (int i = 0; i < n; i++) {
            sel[i * len + at] = 1f;
            at += segments.get(i);
        }
        return Tensor.of(sel, 1, n, len);
    }

    /**
     * The one-hot rows that pick each sequence's last token whose id is not {@code padId} (transformers' decoder
     * classifiers: the rightmost such token of the row; -1: the last token), among the sequence's own tokens (a padded
     * row's, those the key-padding mask keeps; a ragged batch's, its segment), the first of them when every one is the
     * pad token: padded {@code (B, 1, L)}, ragged {@code (1, N, T)}.
     */
    private static Tensor lastTokens(Tensor ids, List<Integer> segments, Tensor keyPadding, int padId) {
        float[] id = ids.data();
        int b = ids.dim(0), len = ids.dim(1);
        boolean ragged = segments != null;
        int rows = ragged ? segments.size() : b;
        float[] sel = new float[rows * len];
        int start = 0;
        for (int r = 0; r < rows; r++) {
            int lo = ragged ? start : r * len, hi = ragged ? start + segments.get(r) : (r + 1) * len;
            int pick = -1, first = -1;
            for (int t = lo; t < hi; t++) {
                if (!ragged && keyPadding != null && keyPadding.data()[t] != 0f) continue;
                if (first < 0) first = t;
                if (padId < 0 || id[t] != padId) pick = t;
            }
            if (pick < 0) pick = first;
            if (pick >= 0) sel[r * len + (ragged ? pick : pick - r * len)] = 1f;
            if (ragged) start = hi;
        }
        return ragged ? Tensor.of(sel, 1, rows, len) : Tensor.of(sel, b, 1, len);
    }

    /**
     * The rows that average each sequence's tokens (ModernBERT's {@code classifier_pooling} {@code mean}: transformers
     * sums the unmasked hidden states and divides by their count): padded {@code (B, 1, L)} with {@code 1/n} on the
     * {@code n} tokens the key-padding mask keeps (non-zero = padding). Padded batches only ({@link
     * #runsRaggedBatches}).
     */
    private static Tensor meanTokens(int b, int len, Tensor keyPadding) {
        float[] pad = keyPadding == null ? null : keyPadding.data();
        float[] sel = new float[b * len];
        for (int i = 0; i < b; i++) {
            int n = 0;
            for (int l = 0; l < len; l++) if (pad == null || pad[i * len + l] == 0f) n++;
            if (n == 0) continue; // no token at all: a zero row (the tokenizer gives every text its special tokens)
            for (int l = 0; l < len; l++) if (pad == null || pad[i * len + l] == 0f) sel[i * len + l] = 1f / n;
        }
        return Tensor.of(sel, b, 1, len);
    }

    private static final String KEY_PADDING = "key_padding_mask";

    private Outputs execute(Backend backend, Signature signature, Map<String, Tensor> feeds, DoubleConsumer progress) {
        GraphCache.Compiled c = graphs.get(backend, signature, this::build);
        List<Tensor> outs = c.executor().run(feeds, progress);
        return new Outputs(outs.get(0), c.weightNames(), List.copyOf(outs.subList(1, outs.size())));
    }

    /** The forward graph for {@code k}: inputs named as {@link Signature} says; outputs as {@link Outputs}. */
    private GraphCache.Built build(Signature k) {
        GraphBuilder g = new GraphBuilder();
        Forward f = new Forward(g, k.weights());
        Node x = g.input("input", k.input());
        Node mem = k.memory() == null ? null : g.input("memory", k.memory());
        Node tgt = k.target() == null ? null : g.input("target", k.target());
        Map<String, Node> nodes = new LinkedHashMap<>();
        for (var e : k.masks().entrySet())
            nodes.put(e.getKey(), g.input(e.getKey(), e.getValue().shape()));
        boolean transformer = root instanceof Root.Both;
        Masks selfMasks = masks(k, nodes, "attn_mask", KEY_PADDING, k.causal() && !transformer);
        Masks tgtMasks = masks(k, nodes, "tgt_mask", "tgt_key_padding_mask", k.causal());
        Masks memMasks = masks(k, nodes, "memory_mask", "memory_key_padding_mask", k.memoryCausal());
        Node out =
                switch (root) {
                    case Root.Attention(MultiheadAttention m) ->
                        m.forward(f, x, mem == null ? x : mem, mem == null ? x : mem, selfMasks);
                    case Root.Single(SelfAttention s) -> s.forward(f, x, selfMasks);
                    case Root.EncoderLayer(TransformerEncoderLayer l) -> l.forward(f, x, selfMasks);
                    case Root.Encoders(TransformerEncoder e) -> e.forward(f, x, selfMasks);
                    case Root.DecoderLayer(TransformerDecoderLayer l) -> l.forward(f, x, mem, tgtMasks, memMasks);
                    case Root.Decoder(TransformerDecoder d) -> d.forward(f, x, mem, tgtMasks, memMasks);
                    case Root.Both(TransformerEncoder encoder, TransformerDecoder decoder) ->
                        decoder.forward(f, tgt, encoder.forward(f, x, selfMasks), tgtMasks, memMasks);
                    case Root.Encoder(EncoderModel m, ClassifierHead.Loaded head) -> {
                        Masks masks = k.segments() != null
                                ? Masks.segments(
                                        k.segments().stream()
                                                .mapToInt(Integer::intValue)
                                                .toArray(),
                                        false)
                                : new Masks(null, MaskKind.NONE, nodes.get(KEY_PADDING), kind(k, KEY_PADDING), false);
                        // MPNet's relative position bias: (H, 2L - 1), padded or ragged
                        if (m.takesPositionBias()) masks = masks.relative(nodes.get(EncoderModel.POSITION_BIAS));
                        Node hidden = m.forward(
                                f,
                                x,
                                g.input(EncoderModel.POSITIONS, k.input()),
                                m.takesTokenTypes() ? g.input(EncoderModel.TOKEN_TYPES, k.input()) : null,
                                masks);
                        yield head == null ? hidden : head.forward(f, hidden, select(g, k));
                    }
                    case Root.CausalEncoder(DecoderModel m, ClassifierHead.Loaded head) -> {
                        Node hidden = m.forward(
                                f,
                                x,
                                g.input(EncoderModel.POSITIONS, k.input()),
                                k.segments() != null
                                        ? Masks.segments(
                                                k.segments().stream()
                                                        .mapToInt(Integer::intValue)
                                                        .toArray(),
                                                m.causal())
                                        : Masks.keyPadding(nodes.get(KEY_PADDING), m.causal()));
                        yield head == null ? hidden : head.forward(f, hidden, select(g, k));
                    }
                };
        List<Node> outputs = new ArrayList<>();
        outputs.add(out);
        outputs.addAll(f.weightNodes().values());
        return new GraphCache.Built(
                g.build(outputs.toArray(Node[]::new)),
                List.copyOf(f.weightNodes().keySet()));
    }

    /** The graph input that picks each sequence's token(s) for a classifier head: {@link ClassifierHead#SELECT}. */
    private static Node select(GraphBuilder g, Signature k) {
        int b = k.input().dim(0), len = k.input().dim(1);
        return k.segments() != null
                ? g.input(ClassifierHead.SELECT, 1, k.segments().size(), len)
                : g.input(ClassifierHead.SELECT, b, 1, len);
    }

    /** One attention block's masks: an attention mask and a key-padding mask (each bool or float), causal or not. */
    private static Masks masks(Signature k, Map<String, Node> nodes, String attn, String keyPadding, boolean causal) {
        return new Masks(nodes.get(attn), kind(k, attn), nodes.get(keyPadding), kind(k, keyPadding), causal);
    }

    private static MaskKind kind(Signature k, String which) {
        Signature.MaskSig m = k.masks().get(which);
        return m == null ? MaskKind.NONE : m.bool() ? MaskKind.BOOL : MaskKind.ADDITIVE;
    }

    @Override
    public void close() {
        graphs.close();
    }
}
