package io.attn.graph;

import static io.attn.AttnException.shape;

import io.attn.AttnException;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link Graph}. Every method checks its operands' shapes and throws {@link io.attn.AttnException} with code
 * {@code SHAPE_MISMATCH} naming the op and the shapes, so a bad graph fails when it is built, not when it runs.
 *
 * <p>Not thread-safe; build a graph on one thread, then share the immutable {@link Graph}.
 */
public final class GraphBuilder {
    private final List<Node> nodes = new ArrayList<>();
    private final Map<String, Node> inputs = new LinkedHashMap<>();
    private final Map<Tensor, Node> constants = new java.util.IdentityHashMap<>();
    // the graph's copies of the QMATMUL row groups given, one per distinct array (a model's layers share its batch's)
    private final java.util.List<int[]> rowGroups = new java.util.ArrayList<>();

    private Node add(Op op, OpParams params, Shape shape, Node... in) {
        for (Node n : in)
            if (n.id() >= nodes.size() || nodes.get(n.id()) != n)
                throw new IllegalArgumentException(n + " belongs to another graph");
        Node n = new Node(nodes.size(), op, params, List.of(in), shape, DType.F32);
        nodes.add(n);
        return n;
    }

    /** A per-call input. */
    public Node input(String name, Shape shape) {
        if (inputs.containsKey(name)) throw new IllegalArgumentException("duplicate graph input '" + name + "'");
        Node n = add(Op.INPUT, new OpParams.Input(name), shape);
        inputs.put(name, n);
        return n;
    }

    public Node input(String name, int... dims) {
        return input(name, Shape.of(dims));
    }

    /** A constant (weight). The same tensor object added twice gives the same node. */
    public Node constant(String name, Tensor value) {
        Node existing = constants.get(value);
        if (existing != null) return existing;
        Node n = add(Op.CONSTANT, new OpParams.Constant(name, value), value.shape());
        constants.put(value, n);
        return n;
    }

    /** {@code alpha * op(a) . op(b)}; {@code b} is either batched like {@code a} or 2-D (shared by every batch). */
    public Node matmul(Node a, Node b, boolean transA, boolean transB, float alpha) {
        Shape sa = a.shape(), sb = b.shape();
        if (sa.rank() < 2 || sb.rank() < 2) throw shape("matmul needs rank >= 2 operands, got " + sa + " and " + sb);
        int m = transA ? sa.dim(-1) : sa.dim(-2);
        int ka = transA ? sa.dim(-2) : sa.dim(-1);
        int kb = transB ? sb.dim(-1) : sb.dim(-2);
        int n = transB ? sb.dim(-2) : sb.dim(-1);
        if (ka != kb)
            throw shape(
                    "matmul inner dimensions differ: " + sa + (transA ? "^T" : "") + " . " + sb + (transB ? "^T" : ""));
        if (sb.rank() > 2) {
            if (sb.rank() != sa.rank()) throw shape("matmul batch ranks differ: " + sa + " and " + sb);
            for (int i = 0; i < sa.rank() - 2; i++)
                if (sa.dim(i) != sb.dim(i)) throw shape("matmul batch dimensions differ: " + sa + " and " + sb);
        }
        return add(
                Op.MATMUL,
                new OpParams.MatMul(transA, transB, alpha),
                sa.with(-2, m).with(-1, n),
                a,
                b);
    }

    public Node matmul(Node a, Node b) {
        return matmul(a, b, false, false, 1f);
    }

    /** PyTorch {@code Linear}: {@code x . W^T + b} with W {@code (out, in)}; {@code bias} may be null. */
    public Node linear(Node x, Node weight, Node bias) {
        Node y = matmul(x, weight, false, true, 1f);
        return bias == null ? y : addBias(y, bias);
    }

    /** {@link #linear(Node, Node, Node)}, then ReLU if {@code relu}. */
    public Node linear(Node x, Node weight, Node bias, boolean relu) {
        Node y = linear(x, weight, bias);
        return relu ? relu(y) : y;
    }

    public Node addBias(Node x, Node bias) {
        if (bias.shape().rank() != 1 || bias.shape().dim(0) != x.shape().dim(-1))
            throw shape("bias " + bias.shape() + " does not fit the last dimension of " + x.shape());
        return add(Op.ADD_BIAS, new OpParams.AddBias(), x.shape(), x, bias);
    }

    public Node add(Node a, Node b) {
        if (!a.shape().equals(b.shape())) throw shape("add needs equal shapes, got " + a.shape() + " and " + b.shape());
        return add(Op.ADD, new OpParams.Add(), a.shape(), a, b);
    }

    public Node scale(Node x, float factor) {
        return add(Op.SCALE, new OpParams.Scale(factor), x.shape(), x);
    }

    /**
     * Softmax over the last dim of {@code scale * x} plus masks. With masks, {@code x} is scores {@code (B, H, L, S)};
     * {@code attnMask} / {@code keyPadding} may be null when the spec says NONE.
     */
    public Node softmax(Node x, float scale, MaskSpec mask, Node attnMask, Node keyPadding) {
        if (mask.segmented()) throw new IllegalArgumentException("a ragged batch (segments) is for ATTENTION only");
        List<Node> in = new ArrayList<>(List.of(x));
        if (mask.any()) {
            if (x.shape().rank() != 4) throw shape("masked softmax needs scores (B, H, L, S), got " + x.shape());
            Shape s = x.shape();
            addMasks(in, mask, attnMask, keyPadding, s.dim(0), s.dim(1), s.dim(2), s.dim(3));
        }
        return add(Op.SOFTMAX, new OpParams.Softmax(scale, mask), x.shape(), in.toArray(Node[]::new));
    }

    public Node softmax(Node x) {
        return softmax(x, 1f, MaskSpec.NONE, null, null);
    }

    /**
     * The attention weights {@code softmax(scale * (q k^T) + masks)} over the keys, q {@code (..., L, D)}, k {@code
     * (..., S, D)} with the same leading dims: {@code matmul(q, k, false, true, 1)} then {@link #softmax(Node, float,
     * MaskSpec, Node, Node)} (the product unscaled, then scaled: PyTorch's order). With masks, q and k are {@code (B, H,
     * ., D)}.
     */
    public Node attentionWeights(Node q, Node k, float scale, MaskSpec mask, Node attnMask, Node keyPadding) {
        if (mask.segmented())
            throw AttnException.badInput("attention weights are not available for a ragged batch (pad the batch)");
        Shape sq = q.shape(), sk = k.shape();
        if (sq.rank() < 2 || sq.rank() != sk.rank())
            throw shape("attention weights need q (..., L, D) and k (..., S, D) of one rank, got " + sq + " and " + sk);
        if (mask.any() && sq.rank() != 4) throw shape("masked attention weights need q and k (B, H, ., D), got " + sq);
        return softmax(matmul(q, k, false, true, 1f), scale, mask, attnMask, keyPadding);
    }

    private static void addMasks(
            List<Node> in, MaskSpec mask, Node attnMask, Node keyPadding, int b, int h, int l, int s) {
        if (mask.attnMask() != MaskKind.NONE) {
            if (attnMask == null)
                throw new IllegalArgumentException("mask spec names an attention mask but none given");
            Shape m = attnMask.shape();
            if (mask.attnMask() == MaskKind.RELATIVE) {
                if (m.rank() != 2 || (m.dim(0) != 1 && m.dim(0) != h) || m.dim(1) != l + s - 1)
                    throw shape("relative position bias " + m + " does not fit scores (" + b + ", " + h + ", " + l
                            + ", " + s + "): expected (H|1, L + S - 1) = (" + h + "|1, " + (l + s - 1) + ")");
                in.add(attnMask);
            } else {
                boolean ok = (m.rank() == 2 && m.dim(0) == l && m.dim(1) == s)
                        || (m.rank() == 4
                                && (m.dim(0) == 1 || m.dim(0) == b)
                                && (m.dim(1) == 1 || m.dim(1) == h)
                                && m.dim(2) == l
                                && m.dim(3) == s);
                if (!ok)
                    throw shape("attention mask " + m + " does not fit scores (" + b + ", " + h + ", " + l + ", " + s
                            + "): expected (L, S) = (" + l + ", " + s + ") or (B|1, H|1, L, S)");
                in.add(attnMask);
            }
        } else if (attnMask != null) throw new IllegalArgumentException("attention mask given but mask spec says NONE");
        if (mask.keyPadding() != MaskKind.NONE) {
            if (keyPadding == null)
                throw new IllegalArgumentException("mask spec names a key-padding mask but none given");
            Shape m = keyPadding.shape();
            if (m.rank() != 2 || m.dim(0) != b || m.dim(1) != s)
                throw shape("key-padding mask " + m + " does not fit: expected (B, S) = (" + b + ", " + s + ")");
            in.add(keyPadding);
        } else if (keyPadding != null)
            throw new IllegalArgumentException("key-padding mask given but mask spec says NONE");
    }

    /** LayerNorm over the last dim; weight and bias (shape {@code (E)}) may be null. */
    public Node layerNorm(Node x, Node weight, Node bias, float eps) {
        int e = x.shape().dim(-1);
        List<Node> in = new ArrayList<>(List.of(x));
        for (Node p : new Node[] {weight, bias}) {
            if (p == null) continue;
            if (p.shape().rank() != 1 || p.shape().dim(0) != e)
                throw shape("layer_norm parameter " + p.shape() + " does not fit the last dimension of " + x.shape());
            in.add(p);
        }
        return add(
                Op.LAYER_NORM,
                new OpParams.LayerNorm(eps, weight != null, bias != null),
                x.shape(),
                in.toArray(Node[]::new));
    }

    public Node relu(Node x) {
        return add(Op.RELU, new OpParams.Relu(), x.shape(), x);
    }

    /**
     * A dynamically quantized product {@code x (..., K) -> (..., N)} ({@link Op#QMATMUL}): the int8 weight {@code (K,
     * N)} (MatMulInteger's B) with its scale and zero point, each of one value or N; {@code groups} the row counts quantized on their own
     * (null: the whole of x at once).
     */
    public Node qmatmul(Node x, Tensor weight, float[] scale, byte[] zeroPoint, int[] groups) {
        return qmatmul(x, weight, scale, zeroPoint, groups, null);
    }

    /**
     * {@link #qmatmul(Node, Tensor, float[], byte[], int[])} of a padded batch: x {@code (B, L, K)}, each of its B
     * sequences a row group, and {@code padding} {@code (B, L)} its key-padding mask (non-zero: a padding row). A
     * padding row is quantized with its group's scale but does not widen the group's range, so that each sequence gets
     * the scale it gets alone or in a ragged batch ({@code padding} null: every row counts).
     */
    public Node qmatmul(Node x, Tensor weight, float[] scale, byte[] zeroPoint, int[] groups, Node padding) {
        Shape sx = x.shape();
        if (weight.dtype() != DType.I8 || weight.rank() != 2)
            throw shape("qmatmul needs an int8 (K, N) weight, got " + weight.dtype() + weight.shape());
        int k = weight.dim(0), n = weight.dim(1);
        if (sx.rank() < 2 || sx.dim(-1) != k)
            throw shape(
                    "qmatmul: x " + sx + " does not end in the weight's K = " + k + " (weight " + weight.shape() + ")");
        if (scale.length != 1 && scale.length != n)
            throw shape("qmatmul: " + scale.length + " weight scales for " + n + " columns");
        if (zeroPoint.length != 1 && zeroPoint.length != n)
            throw shape("qmatmul: " + zeroPoint.length + " weight zero points for " + n + " columns");
        for (float v : scale)
            if (!(v > 0) || !Float.isFinite(v)) throw shape("qmatmul: weight scale " + v + " is not a positive float");
        int rows = sx.size() / k;
        if (groups != null) {
            long sum = 0;
            for (int r : groups) {
                if (r <= 0) throw shape("qmatmul: a row group of " + r + " rows");
                sum += r;
            }
            if (sum != rows)
                throw shape("qmatmul: row groups of " + sum + " rows for x " + sx + " (" + rows + " rows)");
        }
        OpParams.QMatMul p = new OpParams.QMatMul(weight, scale.clone(), zeroPoint.clone(), rowGroups(groups));
        if (padding == null) return add(Op.QMATMUL, p, sx.with(sx.rank() - 1, n), x);
        Shape sp = padding.shape();
        if (sx.rank() != 3 || sp.rank() != 2 || sp.dim(0) != sx.dim(0) || sp.dim(1) != sx.dim(1))
            throw shape("qmatmul: a padding mask " + sp + " needs x (B, L, K) of the same B and L, got " + sx);
        int b = sx.dim(0), len = sx.dim(1);
        if (groups == null
                || groups.length != b
                || java.util.Arrays.stream(groups).anyMatch(r -> r != len))
            throw shape("qmatmul: a padding mask needs one row group of " + len + " rows per sequence, got "
                    + (groups == null ? "none" : java.util.Arrays.toString(groups)));
        return add(Op.QMATMUL, p, sx.with(sx.rank() - 1, n), x, padding);
    }

    /**
     * A copy of {@code groups} (null for null), the same copy for equal arrays: the QMATMUL nodes of one graph then share
     * it, and a backend keeps one derived layout per graph.
     */
    private int[] rowGroups(int[] groups) {
        if (groups == null) return null;
        for (int[] g : rowGroups) if (java.util.Arrays.equals(g, groups)) return g;
        int[] copy = groups.clone();
        rowGroups.add(copy);
        return copy;
    }

    public Node silu(Node x) {
        return add(Op.SILU, new OpParams.Silu(), x.shape(), x);
    }

    public Node gelu(Node x, boolean tanh) {
        return add(Op.GELU, new OpParams.Gelu(tanh), x.shape(), x);
    }

    /** {@code ids} hold integral values (as float); result shape is {@code ids.shape + (E)}. */
    public Node embedding(Node ids, Node table) {
        if (table.shape().rank() != 2) throw shape("embedding table must be (V, E), got " + table.shape());
        return add(
                Op.EMBEDDING,
                new OpParams.Embedding(),
                ids.shape().insert(ids.shape().rank(), table.shape().dim(1)),
                ids,
                table);
    }

    /** An int8 table's rows, dequantized ({@link Op#QEMBEDDING}); the result is {@code ids.shape + (E)}. */
    public Node qembedding(Node ids, Tensor table, float scale, int zeroPoint) {
        if (table.dtype() != DType.I8 || table.rank() != 2)
            throw shape("qembedding needs an int8 (V, E) table, got " + table.dtype() + table.shape());
        if (!(scale > 0) || !Float.isFinite(scale))
            throw shape("qembedding: scale " + scale + " is not a positive float");
        if (zeroPoint < -128 || zeroPoint > 127) throw shape("qembedding: zero point " + zeroPoint + " is not int8");
        return add(
                Op.QEMBEDDING,
                new OpParams.QEmbedding(table, scale, zeroPoint),
                ids.shape().insert(ids.shape().rank(), table.dim(1)),
                ids);
    }

    public Node positionalEncoding(Node x, int offset) {
        if (x.shape().rank() != 3) throw shape("positional encoding needs (B, L, E), got " + x.shape());
        if (offset < 0) throw new IllegalArgumentException("negative position offset " + offset);
        return add(Op.POSITIONAL_ENCODING, new OpParams.PositionalEncoding(offset), x.shape(), x);
    }

    public Node splitHeads(Node x, int heads) {
        Shape s = x.shape();
        if (s.rank() != 3) throw shape("split_heads needs (B, L, E), got " + s);
        if (heads <= 0 || s.dim(2) % heads != 0)
            throw shape("embedding dim " + s.dim(2) + " is not divisible by num_heads " + heads);
        return add(
                Op.SPLIT_HEADS,
                new OpParams.SplitHeads(heads),
                Shape.of(s.dim(0), heads, s.dim(1), s.dim(2) / heads),
                x);
    }

    public Node mergeHeads(Node x) {
        Shape s = x.shape();
        if (s.rank() != 4) throw shape("merge_heads needs (B, H, L, D), got " + s);
        return add(Op.MERGE_HEADS, new OpParams.MergeHeads(), Shape.of(s.dim(0), s.dim(2), s.dim(1) * s.dim(3)), x);
    }

    public Node concat(int axis, Node... parts) {
        if (parts.length == 0) throw new IllegalArgumentException("concat of nothing");
        Shape first = parts[0].shape();
        int ax = axis < 0 ? first.rank() + axis : axis;
        if (ax < 0 || ax >= first.rank()) throw shape("concat axis " + axis + " out of range for " + first);
        int total = 0;
        for (Node p : parts) {
            Shape s = p.shape();
            if (s.rank() != first.rank()) throw shape("concat ranks differ: " + first + " and " + s);
            for (int i = 0; i < s.rank(); i++)
                if (i != ax && s.dim(i) != first.dim(i))
                    throw shape("concat shapes differ off axis " + ax + ": " + first + " and " + s);
            total += s.dim(ax);
        }
        return add(Op.CONCAT, new OpParams.Concat(ax), first.with(ax, total), parts);
    }

    public Node mean(Node x, int axis) {
        int ax = axis < 0 ? x.shape().rank() + axis : axis;
        if (ax < 0 || ax >= x.shape().rank()) throw shape("mean axis " + axis + " out of range for " + x.shape());
        return add(Op.MEAN, new OpParams.Mean(ax), x.shape().remove(ax), x);
    }

    /**
     * Scaled dot-product attention; q {@code (B,H,L,D)}, k {@code (B,Hkv,S,D)}, v {@code (B,Hkv,S,Dv)} gives {@code
     * (B,H,L,Dv)}. {@code scale} NaN means {@code 1/sqrt(D)}. Grouped-query attention when {@code Hkv < H}: {@code H}
     * must be a multiple of {@code Hkv}, and query head {@code h} reads key/value head {@code h / (H / Hkv)} (PyTorch's
     * {@code repeat_interleave} of K/V over heads, {@code enable_gqa=True}; multi-query attention is {@code Hkv = 1}).
     * No K/V copy is made: the backends index the shared head.
     */
    public Node attention(Node q, Node k, Node v, float scale, MaskSpec mask, Node attnMask, Node keyPadding) {
        Shape sq = q.shape(), sk = k.shape(), sv = v.shape();
        if (sq.rank() != 4 || sk.rank() != 4 || sv.rank() != 4)
            throw shape("attention needs q, k, v of rank 4 (B, H, L|S, D), got " + sq + ", " + sk + ", " + sv);
        if (sq.dim(0) != sk.dim(0) || sk.dim(0) != sv.dim(0) || sk.dim(1) != sv.dim(1))
            throw shape("attention batch/head dims differ: q " + sq + ", k " + sk + ", v " + sv);
        if (sk.dim(1) < 1 || sq.dim(1) % sk.dim(1) != 0)
            throw shape("attention: q has " + sq.dim(1) + " heads, which is not a multiple of k/v's " + sk.dim(1)
                    + " heads (grouped-query attention needs H % Hkv == 0): q " + sq + ", k " + sk + ", v " + sv);
        if (sq.dim(3) != sk.dim(3)) throw shape("attention q and k head dims differ: " + sq + " vs " + sk);
        if (sk.dim(2) != sv.dim(2)) throw shape("attention k and v lengths differ: " + sk + " vs " + sv);
        float sc = Float.isNaN(scale) ? (float) (1.0 / Math.sqrt(sq.dim(3))) : scale;
        if (mask.segmented() && (sq.dim(2) != mask.segmentsTotal() || sk.dim(2) != mask.segmentsTotal()))
            throw shape("attention over sequences of lengths " + mask.segments() + " (" + mask.segmentsTotal()
                    + " in all) needs L = S = " + mask.segmentsTotal() + ", got q " + sq + ", k " + sk);
        List<Node> in = new ArrayList<>(List.of(q, k, v));
        addMasks(in, mask, attnMask, keyPadding, sq.dim(0), sq.dim(1), sq.dim(2), sk.dim(2));
        return add(Op.ATTENTION, new OpParams.Attention(sc, mask), sq.with(3, sv.dim(3)), in.toArray(Node[]::new));
    }

    /**
     * Writes {@code x (B, H, L, D)} into rows {@code pos .. pos+L-1} of {@code cache (B, H, C, D)}; {@code pos (1)} holds
     * the start row at run time. {@code cache} must be a graph input that nothing else reads (the op runs in place).
     */
    public Node cacheWrite(Node cache, Node x, Node pos) {
        Shape sc = cache.shape(), sx = x.shape();
        if (cache.op() != Op.INPUT) throw new IllegalArgumentException("cache_write needs a graph input as its cache");
        for (Node n : nodes)
            if (n.inputs().contains(cache))
                throw new IllegalArgumentException("cache_write: cache input " + cache + " is already read by " + n);
        if (sc.rank() != 4 || sx.rank() != 4)
            throw shape("cache_write needs cache (B, H, C, D) and x (B, H, L, D), got " + sc + " and " + sx);
        if (sc.dim(0) != sx.dim(0) || sc.dim(1) != sx.dim(1) || sc.dim(3) != sx.dim(3) || sx.dim(2) > sc.dim(2))
            throw shape("cache_write: x " + sx + " does not fit cache " + sc);
        if (pos.shape().rank() != 1 || pos.shape().dim(0) != 1)
            throw shape("cache_write position must have shape (1), got " + pos.shape());
        return add(Op.CACHE_WRITE, new OpParams.CacheWrite(), sc, cache, x, pos);
    }

    /**
     * RMSNorm over the last dim: {@code x / sqrt(mean(x^2) + eps) * weight}; {@code weight} (shape {@code (E)}) may be
     * null.
     */
    public Node rmsNorm(Node x, Node weight, float eps) {
        int e = x.shape().dim(-1);
        if (!(eps >= 0) || Float.isInfinite(eps)) throw new IllegalArgumentException("rms_norm eps " + eps);
        if (weight == null) return add(Op.RMS_NORM, new OpParams.RmsNorm(eps, false), x.shape(), x);
        if (weight.shape().rank() != 1 || weight.shape().dim(0) != e)
            throw shape("rms_norm weight " + weight.shape() + " does not fit the last dimension of " + x.shape());
        return add(Op.RMS_NORM, new OpParams.RmsNorm(eps, true), x.shape(), x, weight);
    }

    /**
     * Rotary position embedding (rotate-half layout) of x {@code (B, H, L, D)} at positions {@code offset .. offset +
     * L - 1}; the first {@code rotaryDim} dims rotate ({@link OpParams.Rope}).
     */
    public Node rope(Node x, float theta, int rotaryDim, int offset) {
        return rope(x, null, theta, rotaryDim, offset);
    }

    /**
     * Rotary position embedding of x {@code (B, H, L, D)} with runtime positions: {@code positions} of shape {@code
     * (1)} holds a start {@code p} (positions {@code offset + p + l}: a decoder step at its cache row), of shape {@code
     * (B, L)} the position of each token (plus {@code offset}: left-padded batches); null: {@code offset + l}.
     */
    public Node rope(Node x, Node positions, float theta, int rotaryDim, int offset) {
        return rope(x, positions, theta, rotaryDim, offset, OpParams.Rope.Scaling.NONE);
    }

    /** The same with the inverse frequencies rescaled by {@code scaling} (transformers' {@code rope_type}). */
    public Node rope(Node x, Node positions, float theta, int rotaryDim, int offset, OpParams.Rope.Scaling scaling) {
        Shape s = x.shape();
        if (s.rank() != 4) throw shape("rope needs x (B, H, L, D), got " + s);
        if (rotaryDim < 2 || rotaryDim % 2 != 0 || rotaryDim > s.dim(3))
            throw shape("rope rotary dim " + rotaryDim + " must be even, at least 2 and at most D of " + s);
        if (!(theta > 0) || Float.isInfinite(theta)) throw new IllegalArgumentException("rope theta " + theta);
        if (offset < 0 || offset > OpParams.Rope.MAX_POSITION)
            throw new IllegalArgumentException("rope position offset " + offset);
        if (positions == null)
            return add(
                    Op.ROPE, new OpParams.Rope(theta, rotaryDim, offset, OpParams.Rope.Positions.RANGE, scaling), s, x);
        Shape p = positions.shape();
        OpParams.Rope.Positions kind;
        if (p.rank() == 1 && p.dim(0) == 1) kind = OpParams.Rope.Positions.START;
        else if (p.rank() == 2 && p.dim(0) == s.dim(0) && p.dim(1) == s.dim(2)) kind = OpParams.Rope.Positions.IDS;
        else
            throw shape("rope positions " + p + " must be a start (1) or position ids (B, L) = (" + s.dim(0) + ", "
                    + s.dim(2) + ") for x " + s);
        return add(Op.ROPE, new OpParams.Rope(theta, rotaryDim, offset, kind, scaling), s, x, positions);
    }

    /**
     * Gated linear unit of x {@code (..., 2F)}: {@code act(x[..., :F]) * x[..., F:]} when {@code activatedFirst}, else
     * {@code x[..., :F] * act(x[..., F:])}; the result is {@code (..., F)}.
     */
    public Node glu(Node x, OpParams.Glu.Activation act, boolean activatedFirst) {
        Shape s = x.shape();
        if (s.rank() < 1 || s.dim(-1) % 2 != 0)
            throw shape("glu needs an even last dimension (the two halves), got " + s);
        java.util.Objects.requireNonNull(act, "act");
        return add(Op.GLU, new OpParams.Glu(act, activatedFirst), s.with(-1, s.dim(-1) / 2), x);
    }

    /** Ends the build; {@code outputs} are the values a run returns, in order. */
    public Graph build(Node... outputs) {
        if (outputs.length == 0) throw new IllegalArgumentException("a graph needs at least one output");
        return new Graph(nodes, inputs, List.of(outputs));
    }
}
