package io.attn.nn;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Request;
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
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
            Shape keyPadding,
            Shape attnMask,
            boolean attnMaskBool,
            boolean causal,
            AttentionWeights weights,
            List<Integer> segments) {}

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
    @SuppressWarnings("unchecked")
    public static ModelConfig readConfig(SafeTensors.File f, java.nio.file.Path weights, java.nio.file.Path config) {
        Object json;
        String source;
        if (config != null) {
            source = config.toString();
            json = Json.read(config);
        } else {
            source = weights + " (metadata \"config\")";
            String text = f.metadata().get("config");
            if (text == null)
                throw AttnException.badInput(
                        weights + ": no config given and the safetensors metadata has no \"config\" entry");
            json = Json.parse(text, source);
        }
        if (!(json instanceof Map<?, ?> map)) throw AttnException.badInput(source + ": config must be a JSON object");
        return ModelConfig.parse((Map<String, Object>) map, source);
    }

    public ModelConfig config() {
        return config;
    }

    /** The model width E: every input's last dimension. */
    public int width() {
        return config.layer() != null ? config.layer().dModel() : config.embedDim();
    }

    /** Runs the model on {@code backend}. */
    public Result run(Backend backend, Request in) {
        if (closed) throw new IllegalStateException("model is closed");
        if (config.takesTokenIds()) return runTokens(backend, in);
        boolean unbatched = in.input().rank() == 2;
        Tensor x = batched(in.input(), unbatched, "input");
        Tensor mem = in.memory() == null ? null : batched(in.memory(), unbatched, "memory");
        Tensor tgt = in.target() == null ? null : batched(in.target(), unbatched, "target");
        sameBatch(mem, x, "memory");
        sameBatch(tgt, x, "target");
        Tensor kp = in.keyPaddingMask();
        if (kp != null && unbatched && kp.rank() == 1) kp = kp.reshape(1, kp.dim(0));
        Tensor am = in.attnMask();
        if (am != null && am.rank() == 3) {
            int h = config.layer() != null ? config.layer().nhead() : config.numHeads();
            if (am.dim(0) != x.dim(0) * h)
                throw AttnException.shape("attention mask " + am.shape()
                        + ": a 3-D mask must be (B*num_heads, L, S) = (" + x.dim(0) * h + ", L, S)");
            am = am.reshape(x.dim(0), h, am.dim(1), am.dim(2));
        }
        requireInputs(mem, tgt);

        Key key = new Key(
                backend,
                x.shape(),
                mem == null ? null : mem.shape(),
                tgt == null ? null : tgt.shape(),
                kp == null ? null : kp.shape(),
                am == null ? null : am.shape(),
                in.attnMaskBool(),
                in.causal(),
                in.attentionWeights(),
                null);
        if (in.sequenceLengths() != null)
            throw AttnException.badInput(config.kind() + " does not take a ragged batch (sequence lengths): pad it");
        Map<String, Tensor> feeds = new HashMap<>();
        feeds.put("input", x);
        if (mem != null) feeds.put("memory", mem);
        if (tgt != null) feeds.put("target", tgt);
        if (kp != null) feeds.put("key_padding_mask", kp);
        if (am != null) feeds.put("attn_mask", am);
        return execute(key, backend, feeds, unbatched);
    }

    /**
     * A model whose input is token ids: ids {@code (B, L)} or {@code (L)} with an optional key-padding mask of that
     * shape; or a ragged batch, ids {@code (1, T)} or {@code (T)} with the sequences' lengths.
     */
    private Result runTokens(Backend backend, Request in) {
        if (in.memory() != null || in.target() != null || in.attnMask() != null || in.causal())
            throw AttnException.badInput(config.kind()
                    + " takes token ids and a key-padding mask only (no memory, target, attention mask or causal)");
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
        Tensor kp = in.keyPaddingMask();
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
                            "key-padding mask " + in.keyPaddingMask().shape() + " does not fit token ids "
                                    + in.input().shape() + ": expected the same shape");
            }
            for (int i = 0; i < b; i++) for (int l = 0; l < len; l++) positions[i * len + l] = l;
        }
        Key key = new Key(
                backend,
                ids.shape(),
                null,
                null,
                kp == null ? null : kp.shape(),
                null,
                false,
                false,
                in.attentionWeights(),
                segments);
        Map<String, Tensor> feeds = new HashMap<>();
        feeds.put("input", ids);
        feeds.put(BertModel.POSITIONS, Tensor.of(positions, b, len));
        feeds.put(BertModel.TOKEN_TYPES, Tensor.zeros(b, len));
        if (kp != null) feeds.put("key_padding_mask", kp);
        return execute(key, backend, feeds, unbatched);
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

    private Result execute(Key key, Backend backend, Map<String, Tensor> feeds, boolean unbatched) {
        Compiled c = compiled(key, backend);
        List<Tensor> outs = c.executor().run(feeds);
        Map<String, Tensor> weights = new LinkedHashMap<>();
        for (int i = 1; i < outs.size(); i++) weights.put(c.weightNames().get(i - 1), unbatch(outs.get(i), unbatched));
        return new Result(unbatch(outs.get(0), unbatched), weights);
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
        Node kp = k.keyPadding() == null ? null : g.input("key_padding_mask", k.keyPadding());
        Node am = k.attnMask() == null ? null : g.input("attn_mask", k.attnMask());
        if (root instanceof BertModel bert) {
            Masks masks = k.segments() != null
                    ? Masks.segments(
                            k.segments().stream().mapToInt(Integer::intValue).toArray(), false)
                    : Masks.keyPadding(kp, false);
            Node out = bert.forward(
                    f, x, g.input(BertModel.POSITIONS, k.input()), g.input(BertModel.TOKEN_TYPES, k.input()), masks);
            return compiled(g, f, out, backend);
        }
        MaskKind amKind = am == null ? MaskKind.NONE : k.attnMaskBool() ? MaskKind.BOOL : MaskKind.ADDITIVE;
        Masks selfMasks = new Masks(am, amKind, kp, kp == null ? MaskKind.NONE : MaskKind.BOOL, k.causal());
        Masks memMasks = Masks.keyPadding(kp, false);
        checkWidth(x, "input");
        if (mem != null) checkWidth(mem, "memory");
        if (tgt != null) checkWidth(tgt, "target");
        Node out =
                switch (root) {
                    case MultiheadAttention m ->
                        m.forward(f, x, mem == null ? x : mem, mem == null ? x : mem, selfMasks);
                    case SelfAttention s -> s.forward(f, x, selfMasks);
                    case TransformerEncoderLayer l -> l.forward(f, x, selfMasks);
                    case TransformerEncoder e -> e.forward(f, x, selfMasks);
                    case TransformerDecoderLayer l ->
                        l.forward(f, x, mem, decoderSelf(am, amKind, k.causal()), memMasks);
                    case TransformerDecoder d -> d.forward(f, x, mem, decoderSelf(am, amKind, k.causal()), memMasks);
                    case Object[] t -> {
                        Node memory = ((TransformerEncoder) t[0]).forward(f, x, Masks.keyPadding(kp, false));
                        yield ((TransformerDecoder) t[1])
                                .forward(f, tgt, memory, decoderSelf(am, amKind, k.causal()), memMasks);
                    }
                    default -> throw new IllegalStateException("unexpected root " + root);
                };
        return compiled(g, f, out, backend);
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

    private static Masks decoderSelf(Node am, MaskKind amKind, boolean causal) {
        return new Masks(am, amKind, null, MaskKind.NONE, causal);
    }

    private void checkWidth(Node n, String what) {
        int e = width();
        if (n.shape().rank() != 3 || n.shape().dim(2) != e)
            throw AttnException.shape(what + " has shape " + n.shape() + " but the model width is " + e
                    + ": expected (B, L, " + e + ") or (L, " + e + ")");
    }

    private static Tensor batched(Tensor t, boolean unbatched, String what) {
        if (unbatched) {
            if (t.rank() != 2)
                throw AttnException.shape(what + " has shape " + t.shape() + " but the input is unbatched (L, E)");
            return t.reshape(1, t.dim(0), t.dim(1));
        }
        if (t.rank() != 3)
            throw AttnException.shape(what + " has shape " + t.shape() + ": expected (B, L, E) or (L, E)");
        return t;
    }

    private static void sameBatch(Tensor t, Tensor x, String what) {
        if (t != null && t.dim(0) != x.dim(0))
            throw AttnException.shape(what + " has shape " + t.shape() + " but the input has batch " + x.dim(0)
                    + ": the batch sizes must match");
    }

    private static Tensor unbatch(Tensor t, boolean unbatched) {
        if (!unbatched) return t;
        return t.reshape(t.shape().remove(0));
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
