package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Identifies the pieces of a BERT encoder in an ONNX graph: the embedding tables by their Gathers, each Linear by the
 * Add (or Gemm) of its named bias, each LayerNorm by its named weight, the head count by the attention scaling, the
 * activation by its nodes. The result is the Hugging Face config and the list of weights to convert; nothing is
 * converted here. Not thread-safe; one read uses it once.
 */
final class BertMatcher {
    private static final String WORD = "embeddings.word_embeddings.weight";
    private static final String POSITION = "embeddings.position_embeddings.weight";
    private static final String TOKEN_TYPE = "embeddings.token_type_embeddings.weight";
    private static final Set<String> IGNORED = Set.of("embeddings.position_ids");
    private static final Pattern LAYER = Pattern.compile("encoder\\.layer\\.(\\d{1,6})\\.(.+)");
    private static final List<String> LINEARS = List.of(
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "intermediate.dense",
            "output.dense");
    private static final List<String> NORMS = List.of("attention.output.LayerNorm", "output.LayerNorm");
    private static final int POSITION_STEPS = 8;

    /** How a piece is converted: float values, an int8 weight or table, its scale or its zero point. */
    enum Kind {
        FLOAT,
        INT8,
        SCALE,
        ZERO_POINT
    }

    /**
     * A weight to convert: its Hugging Face name, the ONNX constant, and whether to transpose it; for a quantized piece
     * its kind, and for a table to dequantize (or an int8 weight's zero point, to know its signedness) the scale and
     * zero point constants.
     */
    record Piece(
            String name,
            TensorProto tensor,
            String what,
            boolean transpose,
            Kind kind,
            TensorProto scale,
            TensorProto zeroPoint) {
        Piece(String name, TensorProto tensor, String what, boolean transpose) {
            this(name, tensor, what, transpose, Kind.FLOAT, null, null);
        }
    }

    /** The config and the weights in Hugging Face's state_dict order. */
    record Plan(Map<String, Object> config, Deque<Piece> pieces) {}

    private final Graph g;
    private final Deque<Piece> pieces = new ArrayDeque<>();
    private int hidden;
    private float epsilon;
    private int intermediate;
    private int heads;
    private String activation;

    BertMatcher(Graph g) {
        this.g = g;
    }

    Plan match() {
        int[] word = table(WORD, "from input_ids ", "(V, E)");
        hidden = word[1];
        int[] position = table(POSITION, "", "(P, E)");
        int[] tokenType = table(TOKEN_TYPE, "", "(T, E)");
        for (String table : List.of(WORD, POSITION, TOKEN_TYPE)) add(table, table, false);
        epsilon = LayerNorms.epsilon(g, "embeddings.LayerNorm");
        addNorm("embeddings.LayerNorm");
        int layers = layerCount();
        for (int i = 0; i < layers; i++) layer("encoder.layer." + i + ".");
        if (g.constant("pooler.dense.bias").isPresent()
                || g.constant("pooler.dense.weight").isPresent()) pooler();

        Map<String, Object> config = new LinkedHashMap<>();
        config.put("model_type", "bert");
        config.put("vocab_size", word[0]);
        config.put("hidden_size", hidden);
        config.put("num_hidden_layers", layers);
        config.put("num_attention_heads", heads);
        config.put("intermediate_size", intermediate);
        config.put("hidden_act", activation);
        config.put("layer_norm_eps", (double) epsilon);
        config.put("max_position_embeddings", position[0]);
        config.put("type_vocab_size", tokenType[0]);
        return new Plan(config, pieces);
    }

    /** What to do with an ONNX file of another family: its Hugging Face folder is what attn reads for those. */
    static final String NOT_BERT =
            " (attn imports BERT-family ONNX exports; XLM-RoBERTa, MPNet, ModernBERT and the other"
                    + " families load from their Hugging Face folder: config.json, model.safetensors, tokenizer.json)";

    /** An embedding table: a (rows, E) constant read by a Gather; the word table's indices must be a graph input. */
    private int[] table(String name, String from, String form) {
        boolean quantized =
                g.constant(name).isEmpty() && g.constant(name + QUANTIZED).isPresent();
        String stored = quantized ? name + QUANTIZED : name;
        Optional<NodeProto> gather = g.consumers(stored).stream()
                .filter(n -> Graph.is(n, "Gather")
                        && n.getInputCount() == 2
                        && Graph.input(n, 0).equals(stored))
                .filter(n -> from.isEmpty() || g.isInput(throughCast(Graph.input(n, 1))))
                .findFirst();
        if (gather.isEmpty() || g.constant(stored).isEmpty())
            throw g.bad("not a BERT-family encoder: no Gather " + from + "into a " + form + " table named " + name
                    + NOT_BERT);
        int[] d = quantized ? g.anyDims(stored) : g.weightDims(name);
        if (quantized) quantizedTable(name, gather.get(), d);
        if (d.length != 2 || d[0] == 0 || d[1] == 0)
            throw g.bad(name + " is " + TensorData.shape(d) + ", not a " + form + " table");
        if (hidden != 0 && d[1] != hidden)
            throw g.bad(name + " is " + TensorData.shape(d) + " but the word embeddings are " + hidden + " wide");
        if (name.equals(POSITION)) checkPositions(Graph.input(gather.get(), 1));
        return d;
    }

    /** The quantized tables' Gathers read {@code name_quantized} and are dequantized by a DequantizeLinear. */
    private static final String QUANTIZED = "_quantized";

    private final Map<String, Piece> dequantized = new LinkedHashMap<>();

    /** A table stored uint8/int8, gathered, then dequantized per tensor: kept int8 with its scale and zero point. */
    private void quantizedTable(String name, NodeProto gather, int[] dims) {
        NodeProto dq = g.valueConsumers(Graph.output(gather)).stream()
                .filter(n -> Graph.is(n, "DequantizeLinear") && n.getInputCount() == 3)
                .findFirst()
                .orElseThrow(() -> g.bad(name + QUANTIZED + " is gathered but not dequantized by a DequantizeLinear"));
        String scale = Graph.input(dq, 1), zero = Graph.input(dq, 2);
        if (g.scalar(scale).isEmpty())
            throw g.bad("DequantizeLinear '" + dq.getName() + "' of " + name + " has a scale that is not one float");
        TensorProto z = g.constant(zero)
                .orElseThrow(() ->
                        g.bad("DequantizeLinear '" + dq.getName() + "' of " + name + " has no constant zero point"));
        if (!TensorData.isByte(z)
                || g.anyDims(zero).length > 1
                || java.util.Arrays.stream(g.anyDims(zero)).anyMatch(v -> v != 1))
            throw g.bad(
                    "DequantizeLinear '" + dq.getName() + "' of " + name + " has a zero point that is not one byte");
        dequantized.put(
                name,
                new Piece(
                        name,
                        g.required(name + QUANTIZED),
                        g.what(name + QUANTIZED),
                        false,
                        Kind.INT8,
                        g.required(scale),
                        z));
    }

    private String throughCast(String t) {
        return g.producer(t)
                .filter(p -> Graph.is(p, "Cast"))
                .map(p -> Graph.input(p, 0))
                .orElse(t);
    }

    /**
     * BERT looks its position table up with 0, 1, 2, ...: a slice of a constant that counts so, a Range from 0 by 1,
     * or position ids given as a graph input. RoBERTa-style ids computed from the token ids are refused: the tables
     * would load but the model would not be BERT.
     */
    private void checkPositions(String indices) {
        String t = indices;
        for (int step = 0; step < POSITION_STEPS && !g.isInput(t); step++) {
            if (g.constant(t).isPresent()) {
                long[] v =
                        g.ints(t).orElseThrow(() -> g.bad(POSITION + " is indexed by a constant that is not integers"));
                for (int i = 0; i < v.length; i++)
                    if (v[i] != i)
                        throw g.bad(POSITION + " is indexed by constant positions that do not count 0, 1, 2, ...");
                return;
            }
            NodeProto p = g.producer(t).orElseThrow(() -> g.bad(POSITION + " is indexed by an undefined tensor"));
            switch (Graph.op(p)) {
                case "Slice" -> {
                    boolean fromZero = p.getInputCount() > 1
                            && g.ints(Graph.input(p, 1))
                                    .filter(BertMatcher::allZero)
                                    .isPresent();
                    if (!fromZero) throw g.bad(POSITION + " is indexed by a Slice that does not start at 0");
                }
                case "Range" -> {
                    boolean counts = p.getInputCount() == 3
                            && g.ints(Graph.input(p, 0))
                                    .filter(s -> s.length == 1 && s[0] == 0)
                                    .isPresent()
                            && g.ints(Graph.input(p, 2))
                                    .filter(s -> s.length == 1 && s[0] == 1)
                                    .isPresent();
                    if (!counts) throw g.bad(POSITION + " is indexed by a Range that is not 0, 1, 2, ...");
                    return;
                }
                case "Unsqueeze", "Squeeze", "Reshape", "Expand", "Cast", "Identity" -> {}
                default ->
                    throw g.bad(POSITION + " is indexed by positions computed with " + Graph.op(p)
                            + ", not 0, 1, 2, ... (RoBERTa-style position ids are not BERT's)");
            }
            t = Graph.input(p, 0);
        }
        if (!g.isInput(t)) throw g.bad(POSITION + " is indexed by positions too far from a constant or an input");
    }

    private static boolean allZero(long[] v) {
        for (long x : v) if (x != 0) return false;
        return true;
    }

    /** The number of layers: every encoder.layer.N.* initializer a BertModel weight, N from 0 with no gap. */
    private int layerCount() {
        TreeSet<Integer> found = new TreeSet<>();
        for (String name : g.initializerNames()) {
            Matcher m = LAYER.matcher(name);
            if (m.matches()) {
                if (!isLayerWeight(m.group(2))) throw g.bad(name + " is not a BertModel weight");
                found.add(Integer.parseInt(m.group(1)));
            } else if (isBertName(name) && !isTopWeight(name)) {
                throw g.bad(name + " is not a BertModel weight");
            }
        }
        if (found.isEmpty())
            throw g.bad("not a BERT-family encoder: no initializers named encoder.layer.N.*" + NOT_BERT);
        for (int i = 0; i <= found.last(); i++)
            if (!found.contains(i))
                throw g.bad("encoder.layer." + i + " is missing (the file has layers up to " + found.last() + ")");
        return found.size();
    }

    private static boolean isLayerWeight(String suffix) {
        String piece = suffix.endsWith(".weight")
                ? suffix.substring(0, suffix.length() - 7)
                : suffix.endsWith(".bias") ? suffix.substring(0, suffix.length() - 5) : "";
        return LINEARS.contains(piece) || NORMS.contains(piece);
    }

    private static boolean isBertName(String name) {
        return name.startsWith("embeddings.") || name.startsWith("encoder.") || name.startsWith("pooler.");
    }

    private static boolean isTopWeight(String name) {
        for (String suffix : List.of(QUANTIZED, "_scale", "_zero_point"))
            if (name.endsWith(suffix) && name.length() > suffix.length()) {
                String base = name.substring(0, name.length() - suffix.length());
                if (base.equals(WORD) || base.equals(POSITION) || base.equals(TOKEN_TYPE)) return true;
            }
        return name.equals(WORD)
                || name.equals(POSITION)
                || name.equals(TOKEN_TYPE)
                || name.equals("embeddings.LayerNorm.weight")
                || name.equals("embeddings.LayerNorm.bias")
                || name.equals("pooler.dense.weight")
                || name.equals("pooler.dense.bias")
                || IGNORED.contains(name);
    }

    private void layer(String p) {
        for (String piece : LINEARS) g.required(p + piece + ".bias");
        for (String norm : NORMS) {
            g.required(p + norm + ".weight");
            g.required(p + norm + ".bias");
        }
        if (intermediate == 0) {
            int[] b = g.weightDims(p + "intermediate.dense.bias");
            if (b.length != 1 || b[0] == 0)
                throw g.bad(p + "intermediate.dense.bias is " + TensorData.shape(b) + ", not a vector");
            intermediate = b[0];
        }
        Linear query = linear(p + "attention.self.query", hidden, hidden);
        Linear key = linear(p + "attention.self.key", hidden, hidden);
        linear(p + "attention.self.value", hidden, hidden);
        linear(p + "attention.output.dense", hidden, hidden);
        norm(p + "attention.output.LayerNorm");
        Linear up = linear(p + "intermediate.dense", intermediate, hidden);
        Linear down = linear(p + "output.dense", hidden, intermediate);
        norm(p + "output.LayerNorm");

        int h = AttentionHeads.count(g, p, query, key, hidden);
        if (heads != 0 && h != heads) throw g.bad(p + "attention has " + h + " heads but layer 0 has " + heads);
        heads = h;
        String act = Activations.of(g, p, up, down);
        if (activation != null && !act.equals(activation))
            throw g.bad(p + "intermediate has activation " + act + " but layer 0 has " + activation);
        activation = act;
    }

    private void pooler() {
        g.required("pooler.dense.bias");
        Linear dense = linear("pooler.dense", hidden, hidden);
        boolean tanh = g.valueConsumers(dense.output()).stream().anyMatch(n -> Graph.is(n, "Tanh"));
        if (!tanh) throw g.bad("pooler.dense is not followed by a Tanh");
    }

    /** Finds a Linear by its bias, checks it is (out, in) in PyTorch's order, and adds its weight and bias. */
    private Linear linear(String prefix, int out, int in) {
        String bias = prefix + ".bias";
        Linear l = Linear.find(g, bias);
        int[] b = g.weightDims(bias);
        if (b.length != 1 || b[0] != out)
            throw g.bad(bias + " is " + TensorData.shape(b) + " where (" + out + ") was expected");
        int[] w = l.quantized() ? g.anyDims(l.weight()) : g.weightDims(l.weight());
        if (w.length != 2) throw g.bad(prefix + ".weight (" + g.what(l.weight()) + ") is " + TensorData.shape(w));
        int[] torch = l.inOut() ? new int[] {w[1], w[0]} : w;
        if (torch[0] != out || torch[1] != in)
            throw g.bad(prefix + ".weight (" + g.what(l.weight()) + ") is " + TensorData.shape(torch)
                    + " as (out, in) where (" + out + ", " + in + ") was expected");
        if (l.quantized()) addQuantized(prefix, l, out);
        else add(prefix + ".weight", l.weight(), l.inOut());
        add(bias, bias, false);
        return l;
    }

    /**
     * A quantized Linear's int8 (in, out) weight, its scale and zero point (one, or one per output); a uint8 weight is
     * shifted to int8 with its zero point (the differences, all the product uses, are unchanged).
     */
    private void addQuantized(String prefix, Linear l, int out) {
        TensorProto w = g.required(l.weight()), z = g.required(l.zeroPoint()), s = g.required(l.scale());
        String node = "the quantized " + prefix + " (" + g.what(l.weight()) + ")";
        if (!TensorData.isByte(w))
            throw g.bad(node + ": weights of ONNX type " + w.getDataType() + ", not 8-bit (int8 or uint8)");
        if (!TensorData.isByte(z) || TensorData.isUnsigned8(z) != TensorData.isUnsigned8(w))
            throw g.bad(node + ": its zero point " + g.what(l.zeroPoint()) + " is not of the weight's 8-bit type");
        int zs = count(g.anyDims(l.zeroPoint())), ss = count(g.weightDims(l.scale()));
        if (zs != 1 && zs != out)
            throw g.bad(node + ": " + zs + " zero points (per-row or blocked quantization); the importer takes one or "
                    + out + " (per output)");
        if (ss != 1 && ss != out)
            throw g.bad(node + ": " + ss + " scales (per-row or blocked quantization); the importer takes one or " + out
                    + " (per output)");
        pieces.add(new Piece(prefix + ".weight", w, g.what(l.weight()), false, Kind.INT8, null, z));
        pieces.add(new Piece(prefix + ".weight_scale", s, g.what(l.scale()), false, Kind.SCALE, null, null));
        pieces.add(new Piece(prefix + ".weight_zero_point", z, g.what(l.zeroPoint()), false, Kind.ZERO_POINT, null, z));
    }

    private static int count(int[] dims) {
        int c = 1;
        for (int d : dims) c *= d;
        return c;
    }

    private void norm(String prefix) {
        float eps = LayerNorms.epsilon(g, prefix);
        if (eps != epsilon) throw g.bad(prefix + " has epsilon " + eps + " but embeddings.LayerNorm has " + epsilon);
        addNorm(prefix);
    }

    private void addNorm(String prefix) {
        for (String part : List.of(".weight", ".bias")) {
            String name = prefix + part;
            int[] d = g.weightDims(name);
            if (d.length != 1 || d[0] != hidden)
                throw g.bad(name + " is " + TensorData.shape(d) + " where (" + hidden + ") was expected");
            add(name, name, false);
        }
    }

    private void add(String hfName, String constant, boolean transpose) {
        Piece dq = dequantized.get(hfName);
        if (dq != null) { // an int8 table: kept int8, with its scale and zero point (QEMBEDDING)
            pieces.add(new Piece(hfName, dq.tensor(), dq.what(), false, Kind.INT8, null, dq.zeroPoint()));
            pieces.add(new Piece(hfName + "_scale", dq.scale(), dq.what() + "'s scale", false, Kind.SCALE, null, null));
            pieces.add(new Piece(
                    hfName + "_zero_point",
                    dq.zeroPoint(),
                    dq.what() + "'s zero point",
                    false,
                    Kind.ZERO_POINT,
                    null,
                    dq.zeroPoint()));
            return;
        }
        pieces.add(new Piece(hfName, g.required(constant), g.what(constant), transpose));
    }
}
