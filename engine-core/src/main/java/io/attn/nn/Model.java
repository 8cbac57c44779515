package io.attn.nn;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Request;
import io.attn.engine.Request.MaskArg;
import io.attn.engine.Result;
import io.attn.exec.Executor;
import io.attn.exec.Resources;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.io.Json;
import io.attn.io.SafeTensors;
import io.attn.tensor.Finite;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleConsumer;

/**
 * A loaded model: a {@link ModelConfig} and its weights, ready to run on a backend. The forward graph is built per
 * input signature (shapes, masks, weights wanted) and kept in a small cache (least recently used out). All graphs of
 * the model on one backend share its {@link Resources}: the weights are uploaded once and the working memory is pooled
 * across shapes, so a model called with many shapes (token batches of every length) holds one copy of its weights and
 * working memory for its largest batch per concurrent call.
 *
 * <p>Thread-safe: {@link #run} may be called from many threads at once. Close the model to release its resources (device
 * buffers on GPU backends); the backend itself belongs to the caller.
 */
public final class Model implements AutoCloseable {
    private static final int MAX_CACHED = 64;

    private final ModelConfig config;
    private final Object root; // one of the module classes, per config.kind()
    private final Map<Key, Compiled> compiled = new LinkedHashMap<>(16, 0.75f, true); // access order: LRU
    private final Map<Backend, Resources> resources = new IdentityHashMap<>();
    private volatile boolean closed;

    /** A built graph's executor and the block names of its attention-weight outputs (outputs 1..n). */
    private record Compiled(Executor executor, List<String> weightNames) {}

    private record Key(
            Backend backend,
            Shape input,
            Shape memory,
            Shape target,
            Map<MaskArg, MaskSig> masks,
            boolean causal,
            boolean memoryCausal,
            AttentionWeights weights,
            List<Integer> segments) {}

    /** A mask's part of a graph signature: its shape as fed, and bool or float. */
    private record MaskSig(Shape shape, boolean bool) {}

    private Model(ModelConfig config, Object root) {
        this.config = config;
        this.root = root;
    }

    /** Builds the model's layers from {@code sd}; every tensor must be used, with the right shape. */
    public static Model load(ModelConfig c, StateDict sd) {
        Object root =
                switch (c.kind()) {
                    case MultiheadAttention -> new MultiheadAttention(sd, "", c.embedDim(), c.numHeads(), c.bias());
                    case SelfAttention -> new SelfAttention(sd, "", c.embedDim());
                    case TransformerEncoderLayer -> new TransformerEncoderLayer(sd, "", c.layer());
                    case TransformerDecoderLayer -> new TransformerDecoderLayer(sd, "", c.layer());
                    case TransformerEncoder -> new TransformerEncoder(sd, "", c.layer(), c.numLayers(), c.finalNorm());
                    case TransformerDecoder -> new TransformerDecoder(sd, "", c.layer(), c.numLayers(), c.finalNorm());
                    case Transformer ->
                        new Object[] {
                            new TransformerEncoder(sd, "encoder.", c.layer(), c.numEncoderLayers(), true),
                            new TransformerDecoder(sd, "decoder.", c.layer(), c.numDecoderLayers(), true)
                        };
                    case BertModel -> new BertModel(sd, c.bert());
                };
        sd.checkAllUsed();
        return new Model(c, root);
    }

    /**
     * Loads a model exported from PyTorch: {@code weights} is a safetensors file with the module's {@code state_dict()};
     * the config is read from {@code config} (JSON), or when that is null from the {@code "config"} entry of the
     * safetensors metadata.
     *
     * @throws AttnException BAD_INPUT / SHAPE_MISMATCH naming the file and the problem
     */
    public static Model load(java.nio.file.Path weights, java.nio.file.Path config) {
        SafeTensors.File f = SafeTensors.read(weights);
        return load(readConfig(f, weights, config), new StateDict(f.tensors(), weights.toString()));
    }

    /** The config of a model file: {@code config} (JSON) when given, else the safetensors metadata's {@code "config"}. */
    public static ModelConfig readConfig(SafeTensors.File f, java.nio.file.Path weights, java.nio.file.Path config) {
        Map<String, Object> json;
        String source;
        if (config != null) {
            source = config.toString();
            json = Json.readObject(config);
        } else {
            source = weights + " (metadata \"config\")";
            String text = f.metadata().get("config");
            if (text == null)
                throw AttnException.badInput(
                        weights + ": no config given and the safetensors metadata has no \"config\" entry");
            json = Json.parseObject(text, source);
        }
        return ModelConfig.parse(json, source);
    }

    public ModelConfig config() {
        return config;
    }

    /** The model width E: every input's last dimension. */
    public int width() {
        return config.layer() != null ? config.layer().dModel() : config.embedDim();
    }

    /**
     * Runs the model on {@code backend}: checks the request against the module's PyTorch forward (inputs, layout,
     * which masks it takes and their shapes; NaN/Inf unless the request opts out), then runs the graph built for its
     * signature.
     */
    public Result run(Backend backend, Request in) {
        if (closed) throw new IllegalStateException("model is closed");
        if (config.takesTokenIds()) return runTokens(backend, in);
        if (in.sequenceLengths() != null)
            throw AttnException.badInput(config.kind() + " does not take a ragged batch (sequence lengths): pad it");
        requireInputs(in.memory(), in.target());
        boolean unbatched = in.input().rank() == 2;
        Tensor x = layout(in.input(), unbatched, "input");
        Tensor mem = in.memory() == null ? null : layout(in.memory(), unbatched, "memory");
        Tensor tgt = in.target() == null ? null : layout(in.target(), unbatched, "target");
        sameBatch(mem, in.memory(), x, "memory");
        sameBatch(tgt, in.target(), x, "target");
        if (in.memoryCausal() && !takesMemory())
            throw AttnException.badInput("memory_is_causal is not an argument of " + config.kind()
                    + "'s forward (it is for a decoder's cross-attention)");
        Map<String, Tensor> feeds = new HashMap<>();
        Map<MaskArg, MaskSig> masks = new EnumMap<>(MaskArg.class);
        for (var e : in.masks().entrySet()) {
            Tensor m = maskTensor(e.getKey(), e.getValue().values(), x, mem, tgt, unbatched);
            masks.put(e.getKey(), new MaskSig(m.shape(), e.getValue().bool()));
            feeds.put(e.getKey().torchName(), m);
        }
        if (in.finiteCheck()) {
            checkFinite(in.input(), "input");
            if (mem != null) checkFinite(in.memory(), "memory");
            if (tgt != null) checkFinite(in.target(), "target");
            for (var e : in.masks().entrySet()) {
                Tensor m = e.getValue().values();
                int bad = Finite.indexOfNanOrPositiveInfinity(m.data());
                if (bad >= 0)
                    throw new AttnException(
                                    AttnException.Code.NON_FINITE,
                                    e.getKey().torchName() + " holds " + m.data()[bad] + " at " + m.indexString(bad)
                                            + " (a mask may hold -inf, not NaN or +inf)")
                            .about(e.getKey().torchName());
            }
        }
        Key key = new Key(
                backend,
                x.shape(),
                mem == null ? null : mem.shape(),
                tgt == null ? null : tgt.shape(),
                masks,
                in.causal(),
                in.memoryCausal(),
                in.attentionWeights(),
                null);
        feeds.put("input", x);
        if (mem != null) feeds.put("memory", mem);
        if (tgt != null) feeds.put("target", tgt);
        Result r = execute(key, backend, feeds, in.progress(), unbatched);
        return new Result(toLayout(r.output(), unbatched), r.attentionWeights());
    }

    /** The masks each module kind's forward takes (by PyTorch argument). */
    private Set<MaskArg> masksTaken() {
        return switch (config.kind()) {
            case MultiheadAttention, SelfAttention, TransformerEncoderLayer, TransformerEncoder ->
                EnumSet.of(MaskArg.ATTN_MASK, MaskArg.KEY_PADDING_MASK);
            case TransformerDecoderLayer, TransformerDecoder ->
                EnumSet.of(
                        MaskArg.TGT_MASK,
                        MaskArg.MEMORY_MASK,
                        MaskArg.TGT_KEY_PADDING_MASK,
                        MaskArg.MEMORY_KEY_PADDING_MASK);
            case Transformer -> EnumSet.allOf(MaskArg.class);
            case BertModel -> EnumSet.of(MaskArg.KEY_PADDING_MASK);
        };
    }

    /** Whether the module has a decoder's cross-attention over a memory. */
    private boolean takesMemory() {
        return switch (config.kind()) {
            case TransformerDecoderLayer, TransformerDecoder, Transformer -> true;
            default -> false;
        };
    }

    /**
     * The mask {@code which} checked against the module and the batch-first inputs, shaped for the graph: attention
     * masks {@code (L, S)} or {@code (B, H, L, S)} (from PyTorch's {@code (B*H, L, S)}), key-padding masks {@code (B,
     * S)}. L and S are the mask's queries and keys: the src for encoders' masks, tgt for {@code tgt_*}, tgt against
     * the memory (the src for {@code Transformer}) for {@code memory_*}, query against key for MHA.
     */
    private Tensor maskTensor(MaskArg which, Tensor m, Tensor x, Tensor mem, Tensor tgt, boolean unbatched) {
        String name = which.torchName();
        if (!masksTaken().contains(which))
            throw AttnException.badInput(name + " is not an argument of " + config.kind() + "'s forward (its masks are "
                            + masksTaken().stream().map(MaskArg::torchName).toList() + ")")
                    .about(name);
        boolean transformer = config.kind() == ModelConfig.Kind.Transformer;
        Tensor decoderInput = transformer ? tgt : x, encoderOutput = transformer ? x : mem;
        Tensor queries =
                switch (which) {
                    case ATTN_MASK, KEY_PADDING_MASK -> x;
                    case TGT_MASK, TGT_KEY_PADDING_MASK, MEMORY_MASK, MEMORY_KEY_PADDING_MASK -> decoderInput;
                };
        Tensor keys =
                switch (which) {
                    case ATTN_MASK, KEY_PADDING_MASK -> mem != null && !transformer ? mem : x;
                    case TGT_MASK, TGT_KEY_PADDING_MASK -> decoderInput;
                    case MEMORY_MASK, MEMORY_KEY_PADDING_MASK -> encoderOutput;
                };
        int b = x.dim(0), l = queries.dim(1), s = keys.dim(1), h = heads();
        if (which.keyPadding()) {
            if (unbatched && m.rank() == 1 && m.dim(0) == s) return m.reshape(1, s);
            if (m.rank() == 2 && m.dim(0) == b && m.dim(1) == s) return m;
            throw AttnException.shape(name + " has shape " + m.shape() + ": expected "
                            + (unbatched ? "(S) = (" + s + ")" : "(B, S) = (" + b + ", " + s + ")"))
                    .about(name);
        }
        if (m.rank() == 2 && m.dim(0) == l && m.dim(1) == s) return m;
        if (m.rank() == 3 && m.dim(0) == b * h && m.dim(1) == l && m.dim(2) == s) return m.reshape(b, h, l, s);
        throw AttnException.shape(name + " has shape " + m.shape() + ": expected (L, S) = (" + l + ", " + s + ") or "
                        + (unbatched ? "(num_heads, L, S) = (" : "(B*num_heads, L, S) = (") + b * h + ", " + l + ", "
                        + s
                        + ")")
                .about(name);
    }

    private int heads() {
        return config.layer() != null ? config.layer().nhead() : config.numHeads();
    }

    /**
     * An input in the graph's layout {@code (B, L, E)}: unbatched {@code (L, E)} gets a batch of one; a sequence-first
     * model's {@code (L, B, E)} is transposed (a copy).
     */
    private Tensor layout(Tensor t, boolean unbatched, String what) {
        int e = width();
        String want = unbatched ? "(L, " + e + ")" : config.batchFirst() ? "(B, L, " + e + ")" : "(L, B, " + e + ")";
        String or = unbatched ? "" : " or (L, " + e + ")";
        if (t.rank() != (unbatched ? 2 : 3))
            throw AttnException.shape(what + " has shape " + t.shape() + ": expected " + want
                            + (what.equals("input") ? or : ", as the input is"))
                    .about(what);
        if (t.dim(-1) != e)
            throw AttnException.shape(what + " has shape " + t.shape() + " but the model width is " + e + ": expected "
                            + want + or)
                    .about(what);
        if (unbatched) return t.reshape(1, t.dim(0), t.dim(1));
        return config.batchFirst() ? t : swap01(t);
    }

    /** An output back in the caller's layout (see {@link #layout}). */
    private Tensor toLayout(Tensor t, boolean unbatched) {
        if (unbatched) return t.reshape(t.shape().remove(0));
        return config.batchFirst() ? t : swap01(t);
    }

    /** {@code (P, Q, E) -> (Q, P, E)}: PyTorch's {@code transpose(0, 1)}, copied. */
    private static Tensor swap01(Tensor t) {
        int p = t.dim(0), q = t.dim(1), e = t.dim(2);
        float[] src = t.data(), dst = new float[src.length];
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) System.arraycopy(src, (i * q + j) * e, dst, (j * p + i) * e, e);
        return Tensor.of(dst, q, p, e);
    }

    private static void checkFinite(Tensor t, String what) {
        int bad = Finite.indexOfNonFinite(t.data());
        if (bad >= 0)
            throw new AttnException(
                            AttnException.Code.NON_FINITE,
                            what + " holds " + t.data()[bad] + " at " + t.indexString(bad) + ": inputs must be finite")
                    .about(what);
    }

    /**
     * A model whose input is token ids: ids {@code (B, L)} or {@code (L)} with an optional key-padding mask of that
     * shape; or a ragged batch, ids {@code (1, T)} or {@code (T)} with the sequences' lengths.
     */
    private Result runTokens(Backend backend, Request in) {
        Request.Mask kpMask = in.mask(MaskArg.KEY_PADDING_MASK);
        if (in.memory() != null
                || in.target() != null
                || in.masks().size() != (kpMask == null ? 0 : 1)
                || in.causal()
                || in.memoryCausal())
            throw AttnException.badInput(config.kind()
                    + " takes token ids and a key-padding mask only (no memory, target, other masks or causal)");
        if (kpMask != null && !kpMask.bool())
            throw AttnException.badInput(config.kind() + " takes a bool key-padding mask (non-zero = padding)");
        Tensor ids = in.input();
        boolean unbatched = ids.rank() == 1;
        if (unbatched) ids = ids.reshape(1, ids.dim(0));
        if (ids.rank() != 2)
            throw AttnException.shape("token ids have shape " + in.input().shape() + ": expected (B, L) or (L)");
        int b = ids.dim(0), len = ids.dim(1);
        if (b == 0 || len == 0)
            throw AttnException.shape("token ids have shape " + in.input().shape() + ": empty");
        int vocab = config.bert().vocabSize();
        float[] d = ids.data();
        for (int i = 0; i < d.length; i++)
            if (!(d[i] >= 0 && d[i] < vocab && d[i] == Math.rint(d[i])))
                throw AttnException.badInput("token id " + d[i] + " at [" + i / len + ", " + i % len
                        + "] is not in the vocabulary [0, " + vocab + ")");
        int[] lengths = in.sequenceLengths();
        Tensor kp = kpMask == null ? null : kpMask.values();
        float[] positions = new float[b * len];
        List<Integer> segments = null;
        if (lengths != null) {
            if (b != 1)
                throw AttnException.shape("a ragged batch is one row of token ids (1, T) or (T), got " + ids.shape());
            if (kp != null) throw AttnException.badInput("a ragged batch has no padding: no key-padding mask");
            if (in.attentionWeights() != AttentionWeights.NONE)
                throw AttnException.badInput("attention weights are not available for a ragged batch (pad the batch)");
            long total = 0;
            segments = new ArrayList<>(lengths.length);
            for (int n : lengths) {
                if (n <= 0) throw AttnException.badInput("sequence lengths must be positive, got " + n);
                total += n;
                segments.add(n);
            }
            if (total != len)
                throw AttnException.shape("sequence lengths sum to " + total + " but there are " + len + " token ids");
            for (int i = 0, at = 0; i < lengths.length; at += lengths[i++])
                for (int l = 0; l < lengths[i]; l++) positions[at + l] = l;
        } else {
            if (kp != null) {
                if (unbatched && kp.rank() == 1) kp = kp.reshape(1, kp.dim(0));
                if (!kp.shape().equals(ids.shape()))
                    throw AttnException.shape(
                            "key-padding mask " + kpMask.values().shape() + " does not fit token ids "
                                    + in.input().shape() + ": expected the same shape");
            }
            for (int i = 0; i < b; i++) for (int l = 0; l < len; l++) positions[i * len + l] = l;
        }
        if (in.finiteCheck() && kp != null) checkFinite(kp, "key_padding_mask");
        Map<MaskArg, MaskSig> masks = new EnumMap<>(MaskArg.class);
        if (kp != null) masks.put(MaskArg.KEY_PADDING_MASK, new MaskSig(kp.shape(), true));
        Key key = new Key(backend, ids.shape(), null, null, masks, false, false, in.attentionWeights(), segments);
        Map<String, Tensor> feeds = new HashMap<>();
        feeds.put("input", ids);
        feeds.put(BertModel.POSITIONS, Tensor.of(positions, b, len));
        feeds.put(BertModel.TOKEN_TYPES, Tensor.zeros(b, len));
        if (kp != null) feeds.put(MaskArg.KEY_PADDING_MASK.torchName(), kp);
        Result r = execute(key, backend, feeds, in.progress(), unbatched);
        return unbatched ? new Result(r.output().reshape(r.output().shape().remove(0)), r.attentionWeights()) : r;
    }

    /**
     * Whether {@code backend} runs the ragged batches of {@link Request#withSequenceLengths} (its fused attention over
     * sequences laid one after another).
     */
    public static boolean supportsRaggedBatches(Backend backend) {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, 3, 4);
        return backend.supports(g.attention(q, q, q, 0.5f, MaskSpec.segments(false, 1, 2), null, null));
    }

    /** Runs the graph for {@code key}; outputs and weights in the graph's layout, weights unbatched with the input. */
    private Result execute(
            Key key, Backend backend, Map<String, Tensor> feeds, DoubleConsumer progress, boolean unbatched) {
        Compiled c = compiled(key, backend);
        List<Tensor> outs = c.executor().run(feeds, progress);
        Map<String, Tensor> weights = new LinkedHashMap<>();
        for (int i = 1; i < outs.size(); i++) {
            Tensor w = outs.get(i);
            weights.put(
                    c.weightNames().get(i - 1), unbatched ? w.reshape(w.shape().remove(0)) : w);
        }
        return new Result(outs.get(0), weights);
    }

    /**
     * The executor for {@code key}: from the cache, or built (outside the lock) and cached, the least recently used
     * entry going when the cache is full. Executors share the model's {@link Resources} and hold nothing of their own,
     * so an evicted one needs no closing and may finish the calls that still use it.
     */
    private Compiled compiled(Key key, Backend backend) {
        synchronized (compiled) {
            if (closed) throw new IllegalStateException("model is closed");
            Compiled c = compiled.get(key);
            if (c != null) return c;
        }
        Compiled c = compile(key, backend);
        synchronized (compiled) {
            Compiled prev = compiled.putIfAbsent(key, c);
            if (prev != null) return prev;
            if (compiled.size() > MAX_CACHED) {
                var it = compiled.entrySet().iterator();
                it.next();
                it.remove();
            }
            return c;
        }
    }

    private Resources resources(Backend backend) {
        synchronized (resources) {
            if (closed) throw new IllegalStateException("model is closed");
            return resources.computeIfAbsent(backend, Resources::new);
        }
    }

    private void requireInputs(Tensor mem, Tensor tgt) {
        switch (config.kind()) {
            case TransformerDecoderLayer, TransformerDecoder -> {
                if (mem == null)
                    throw AttnException.badInput(config.kind() + " needs a memory input (the encoder output)");
            }
            case Transformer -> {
                if (tgt == null) throw AttnException.badInput("Transformer needs a target input (tgt)");
            }
            default -> {}
        }
    }

    private Compiled compile(Key k, Backend backend) {
        GraphBuilder g = new GraphBuilder();
        Forward f = new Forward(g, k.weights());
        Node x = g.input("input", k.input());
        Node mem = k.memory() == null ? null : g.input("memory", k.memory());
        Node tgt = k.target() == null ? null : g.input("target", k.target());
        Map<MaskArg, Node> nodes = new EnumMap<>(MaskArg.class);
        for (var e : k.masks().entrySet())
            nodes.put(e.getKey(), g.input(e.getKey().torchName(), e.getValue().shape()));
        if (root instanceof BertModel bert) {
            Masks masks = k.segments() != null
                    ? Masks.segments(
                            k.segments().stream().mapToInt(Integer::intValue).toArray(), false)
                    : Masks.keyPadding(nodes.get(MaskArg.KEY_PADDING_MASK), false);
            Node out = bert.forward(
                    f, x, g.input(BertModel.POSITIONS, k.input()), g.input(BertModel.TOKEN_TYPES, k.input()), masks);
            return compiled(g, f, out, backend);
        }
        boolean transformer = root instanceof Object[];
        Masks selfMasks = masks(k, nodes, MaskArg.ATTN_MASK, MaskArg.KEY_PADDING_MASK, k.causal() && !transformer);
        Masks tgtMasks = masks(k, nodes, MaskArg.TGT_MASK, MaskArg.TGT_KEY_PADDING_MASK, k.causal());
        Masks memMasks = masks(k, nodes, MaskArg.MEMORY_MASK, MaskArg.MEMORY_KEY_PADDING_MASK, k.memoryCausal());
        Node out =
                switch (root) {
                    case MultiheadAttention m ->
                        m.forward(f, x, mem == null ? x : mem, mem == null ? x : mem, selfMasks);
                    case SelfAttention s -> s.forward(f, x, selfMasks);
                    case TransformerEncoderLayer l -> l.forward(f, x, selfMasks);
                    case TransformerEncoder e -> e.forward(f, x, selfMasks);
                    case TransformerDecoderLayer l -> l.forward(f, x, mem, tgtMasks, memMasks);
                    case TransformerDecoder d -> d.forward(f, x, mem, tgtMasks, memMasks);
                    case Object[] t -> {
                        Node memory = ((TransformerEncoder) t[0]).forward(f, x, selfMasks);
                        yield ((TransformerDecoder) t[1]).forward(f, tgt, memory, tgtMasks, memMasks);
                    }
                    default -> throw new IllegalStateException("unexpected root " + root);
                };
        return compiled(g, f, out, backend);
    }

    /** One attention block's masks: an attention mask and a key-padding mask (each bool or float), causal or not. */
    private static Masks masks(Key k, Map<MaskArg, Node> nodes, MaskArg attn, MaskArg keyPadding, boolean causal) {
        return new Masks(nodes.get(attn), kind(k, attn), nodes.get(keyPadding), kind(k, keyPadding), causal);
    }

    private static MaskKind kind(Key k, MaskArg which) {
        MaskSig m = k.masks().get(which);
        return m == null ? MaskKind.NONE : m.bool() ? MaskKind.BOOL : MaskKind.ADDITIVE;
    }

    private Compiled compiled(GraphBuilder g, Forward f, Node out, Backend backend) {
        List<Node> outputs = new ArrayList<>();
        outputs.add(out);
        outputs.addAll(f.weightNodes().values());
        Graph graph = g.build(outputs.toArray(Node[]::new));
        return new Compiled(
                new Executor(graph, resources(backend)),
                List.copyOf(f.weightNodes().keySet()));
    }

    /** {@code t} (as given: {@code original}) has the batch of the input {@code x}; both in the graph's layout. */
    private static void sameBatch(Tensor t, Tensor original, Tensor x, String what) {
        if (t != null && t.dim(0) != x.dim(0))
            throw AttnException.shape(what + " has shape " + original.shape() + " but the input has batch " + x.dim(0)
                            + ": the batch sizes must match")
                    .about(what);
    }

    @Override
    public void close() {
        synchronized (compiled) {
            closed = true;
            compiled.clear();
        }
        synchronized (resources) {
            for (Resources r : resources.values()) r.close();
            resources.clear();
        }
    }
}
