package io.attn.reference;

import io.attn.graph.Graph;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The judge: a deliberately plain, scalar, double-precision evaluator of any {@link Graph}. One method per op, each
 * written from the PyTorch definition ({@code torch.matmul}, {@code softmax}, {@code F.layer_norm}, {@code F.gelu},
 * {@code nn.Embedding}, the sinusoidal encoding of "Attention Is All You Need", {@code
 * F.scaled_dot_product_attention}) with the engine's mask conventions ({@link MaskSpec}). Inputs are float32 tensors,
 * widened to double; every operation after that is done in double, with no reordering tricks and no vectorisation.
 *
 * <p>Documented deviation from PyTorch: a query row whose keys are all masked gets zero weights and a zero output
 * (PyTorch's math path gives NaN).
 */
public final class Reference {
    private Reference() {}

    /**
     * Evaluates {@code g}; returns one row-major array per graph output, in order, shaped like the output node.
     *
     * @throws IllegalArgumentException when an input is missing or has the wrong shape, or an embedding id is out of
     *     range
     */
    public static List<double[]> run(Graph g, Map<String, Tensor> inputs) {
        double[][] values = new double[g.nodes().size()][];
        for (Node n : g.nodes()) {
            double[][] in = new double[n.inputs().size()][];
            for (int i = 0; i < in.length; i++) in[i] = values[n.input(i).id()];
            values[n.id()] = eval(n, in, inputs);
        }
        List<double[]> out = new ArrayList<>();
        for (Node o : g.outputs()) out.add(values[o.id()].clone());
        return out;
    }

    /** Evaluates one node from its input values (in the node's input order). */
    public static double[] eval(Node n, double[][] in, Map<String, Tensor> inputs) {
        return switch (n.op()) {
            case INPUT -> input(n, inputs);
            case CONSTANT -> widen(n.params(OpParams.Constant.class).value().data());
            case MATMUL -> matmul(n, in[0], in[1]);
            case ADD_BIAS -> addBias(n, in[0], in[1]);
            case ADD -> add(in[0], in[1]);
            case SCALE -> scale(in[0], n.params(OpParams.Scale.class).factor());
            case SOFTMAX -> softmax(n, in);
            case LAYER_NORM -> layerNorm(n, in);
            case RELU -> relu(in[0]);
            case GELU -> gelu(in[0], n.params(OpParams.Gelu.class).tanh());
            case SILU -> silu(in[0]);
            case EMBEDDING -> embedding(n, in[0], in[1]);
            case POSITIONAL_ENCODING -> positionalEncoding(n, in[0]);
            case SPLIT_HEADS -> splitHeads(n, in[0]);
            case MERGE_HEADS -> mergeHeads(n, in[0]);
            case CONCAT -> concat(n, in);
            case MEAN -> mean(n, in[0]);
            case ATTENTION -> attention(n, in);
            case CACHE_WRITE -> cacheWrite(n, in);
            case RMS_NORM -> rmsNorm(n, in);
            case ROPE -> rope(n, in);
            case GLU -> glu(n, in[0]);
            case QMATMUL -> qmatmul(n, in[0], in.length > 1 ? in[1] : null);
            case QEMBEDDING -> qembedding(n, in[0]);
        };
    }

    static double[] widen(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return d;
    }

    private static double[] input(Node n, Map<String, Tensor> inputs) {
        String name = n.params(OpParams.Input.class).name();
        Tensor t = inputs.get(name);
        if (t == null) throw new IllegalArgumentException("missing graph input '" + name + "'");
        if (!t.shape().equals(n.shape()))
            throw new IllegalArgumentException(
                    "input '" + name + "' has shape " + t.shape() + ", expected " + n.shape());
        return widen(t.data());
    }

    /** torch.matmul(op(A), op(B)) * alpha; B either batched like A or 2-D and shared. */
    private static double[] matmul(Node n, double[] a, double[] b) {
        OpParams.MatMul p = n.params(OpParams.MatMul.class);
        Shape sa = n.input(0).shape(), sb = n.input(1).shape();
        int aR = sa.dim(-2), aC = sa.dim(-1), bR = sb.dim(-2), bC = sb.dim(-1);
        int m = p.transA() ? aC : aR, k = p.transA() ? aR : aC, cols = p.transB() ? bR : bC;
        int batch = sa.leading(2);
        boolean shared = sb.rank() == 2;
        double[] out = new double[batch * m * cols];
        for (int t = 0; t < batch; t++) {
            int aOff = t * aR * aC, bOff = shared ? 0 : t * bR * bC, oOff = t * m * cols;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < cols; j++) {
                    double s = 0;
                    for (int x = 0; x < k; x++) {
                        double av = p.transA() ? a[aOff + x * aC + i] : a[aOff + i * aC + x];
                        double bv = p.transB() ? b[bOff + j * bC + x] : b[bOff + x * bC + j];
                        s += av * bv;
                    }
                    out[oOff + i * cols + j] = (double) p.alpha() * s;
                }
            }
        }
        return out;
    }

    private static double[] addBias(Node n, double[] x, double[] bias) {
        int e = n.shape().dim(-1);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = x[i] + bias[i % e];
        return out;
    }

    private static double[] add(double[] a, double[] b) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) out[i] = a[i] + b[i];
        return out;
    }

    private static double[] scale(double[] x, float factor) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = x[i] * (double) factor;
        return out;
    }

    /** Softmax over the last dim of scale*x + masks; masks need x = scores (B, H, L, S). */
    private static double[] softmax(Node n, double[][] in) {
        OpParams.Softmax p = n.params(OpParams.Softmax.class);
        Shape s = n.shape();
        int cols = s.dim(-1), rows = s.size() / Math.max(1, cols);
        double[] x = in[0], out = new double[x.length];
        Masks masks = p.mask().any() ? new Masks(n, p.mask(), in, p.firstMask()) : null;
        double[] row = new double[cols];
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < cols; j++) row[j] = (double) p.scale() * x[r * cols + j];
            if (masks != null) {
                int L = s.dim(2), H = s.dim(1);
                masks.apply(row, r / (H * L), (r / L) % H, r % L);
            }
            softmaxRow(row);
            System.arraycopy(row, 0, out, r * cols, cols);
        }
        return out;
    }

    /**
     * In-place softmax of one row: exp(x - max) / sum. A row whose entries are all -inf (every key masked) becomes all
     * zeros: the engine's documented choice.
     */
    public static void softmaxRow(double[] row) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : row) max = Math.max(max, v);
        if (max == Double.NEGATIVE_INFINITY) {
            java.util.Arrays.fill(row, 0.0);
            return;
        }
        double sum = 0;
        for (int j = 0; j < row.length; j++) {
            row[j] = Math.exp(row[j] - max);
            sum += row[j];
        }
        for (int j = 0; j < row.length; j++) row[j] /= sum;
    }

    /**
     * The masks of a SOFTMAX or ATTENTION node, read per PyTorch: BOOL non-zero = masked out (score -inf), ADDITIVE
     * added to the scaled score, RELATIVE too (the element of the key's offset from the query); causal masks key j > query i; a sliding window masks keys outside {@code [i - left, i +
     * right]}.
     */
    private static final class Masks {
        final MaskSpec spec;
        final int h, l, s;
        final double[] attn, pad;
        final Shape attnShape;
        final int[] segmentOf; // a ragged batch: the sequence each position belongs to

        Masks(Node n, MaskSpec spec, double[][] in, int first) {
            this.spec = spec;
            if (spec.segmented()) {
                int[] len = spec.segmentLengths();
                segmentOf = new int[spec.segmentsTotal()];
                for (int g = 0, at = 0; g < len.length; at += len[g++])
                    java.util.Arrays.fill(segmentOf, at, at + len[g], g);
            } else segmentOf = null;
            Shape sc = n.shape(); // (B,H,L,S) for SOFTMAX; (B,H,L,Dv) for ATTENTION
            this.h = sc.dim(1);
            this.l = sc.dim(2);
            this.s = n.op() == io.attn.graph.Op.ATTENTION ? n.input(1).shape().dim(2) : sc.dim(3);
            int next = first;
            if (spec.attnMask() != MaskKind.NONE) {
                attnShape = n.input(next).shape();
                attn = in[next++];
            } else {
                attnShape = null;
                attn = null;
            }
            pad = spec.keyPadding() != MaskKind.NONE ? in[next] : null;
        }

        void apply(double[] row, int b, int hh, int i) {
            for (int j = 0; j < s; j++) {
                if (spec.causal() && j > i) row[j] = Double.NEGATIVE_INFINITY;
                // a sliding window: keys i - left <= j <= i + right only (long arithmetic: an unbounded side is large)
                if ((long) j < (long) i - spec.left() || (long) j > (long) i + spec.right())
                    row[j] = Double.NEGATIVE_INFINITY;
                // a ragged batch: a block-diagonal mask, each sequence seeing itself only
                if (segmentOf != null && segmentOf[j] != segmentOf[i]) row[j] = Double.NEGATIVE_INFINITY;
                if (attn != null) {
                    int idx;
                    if (spec.relativeBias()) idx = (attnShape.dim(0) == 1 ? 0 : hh) * (l + s - 1) + j - i + l - 1;
                    else if (attnShape.rank() == 2) idx = i * s + j;
                    else {
                        int mb = attnShape.dim(0) == 1 ? 0 : b, mh = attnShape.dim(1) == 1 ? 0 : hh;
                        idx = ((mb * attnShape.dim(1) + mh) * l + i) * s + j;
                    }
                    row[j] = combine(row[j], attn[idx], spec.attnMask());
                }
                if (pad != null) row[j] = combine(row[j], pad[b * s + j], spec.keyPadding());
            }
        }

        private static double combine(double score, double m, MaskKind kind) {
            return switch (kind) {
                case NONE -> score;
                case BOOL -> m != 0 ? Double.NEGATIVE_INFINITY : score;
                case ADDITIVE, RELATIVE -> score + m;
            };
        }
    }

    /** F.layer_norm over the last dim: (x - mean) / sqrt(biased var + eps) * w + b. */
    private static double[] layerNorm(Node n, double[][] in) {
        OpParams.LayerNorm p = n.params(OpParams.LayerNorm.class);
        int e = n.shape().dim(-1), rows = n.shape().size() / Math.max(1, e);
        double[] x = in[0], w = p.hasWeight() ? in[1] : null, bias = p.hasBias() ? in[p.hasWeight() ? 2 : 1] : null;
        double[] out = new double[x.length];
        for (int r = 0; r < rows; r++) {
            double mean = 0;
            for (int j = 0; j < e; j++) mean += x[r * e + j];
            mean /= e;
            double var = 0;
            for (int j = 0; j < e; j++) var += (x[r * e + j] - mean) * (x[r * e + j] - mean);
            var /= e;
            double inv = 1.0 / Math.sqrt(var + (double) p.eps());
            for (int j = 0; j < e; j++) {
                double y = (x[r * e + j] - mean) * inv;
                if (w != null) y *= w[j];
                if (bias != null) y += bias[j];
                out[r * e + j] = y;
            }
        }
        return out;
    }

    private static double[] relu(double[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = Double.isNaN(x[i]) ? x[i] : Math.max(x[i], 0.0);
        return out;
    }

    /**
     * DynamicQuantizeLinear of one row group, as ONNX Runtime computes it (float32 arithmetic; the op's definition):
     * returns {@code {scale, zeroPoint}} and writes {@code q - zeroPoint} (in [-255, 255]) for each of the {@code len}
     * values from {@code off}.
     */
    public static float[] quantize(float[] x, int off, int len, int[] qMinusZero) {
        return quantize(x, off, len, 0, null, 0, qMinusZero);
    }

    /**
     * {@link #quantize(float[], int, int, int[])} of a group of rows of {@code k} values whose range leaves out the
     * rows {@code padding} marks (non-zero at {@code padding[padOff + row of the group]}; null: none): they are
     * quantized with the group's scale and zero point all the same.
     */
    public static float[] quantize(float[] x, int off, int len, int k, float[] padding, int padOff, int[] qMinusZero) {
        float lo = 0f, hi = 0f;
        for (int i = off; i < off + len; i++) {
            if (padding != null && padding[padOff + (i - off) / k] != 0f) continue;
            lo = Math.min(lo, x[i]);
            hi = Math.max(hi, x[i]);
        }
        float scale = hi == lo ? 1f : (hi - lo) / 255f;
        float z0 = 0f - lo / scale;
        int zero = (int) Math.rint(Math.max(0f, Math.min(255f, z0)));
        for (int i = off; i < off + len; i++) {
            float r = (float) Math.rint(x[i] / scale);
            int q = (int) Math.max(0f, Math.min(255f, r + zero));
            qMinusZero[i] = q - zero;
        }
        return new float[] {scale, zero};
    }

    /**
     * QMATMUL's integer part, exactly: {@code acc[r][n] = sum_k (q[r][k] - z) * (w[k][n] - wZero[n])} (as longs, each
     * of which must fit int32), and each row's activation scale in {@code rowScale}.
     */
    public static long[] qmatmulAccumulators(OpParams.QMatMul p, float[] x, float[] rowScale) {
        return qmatmulAccumulators(p, x, null, rowScale);
    }

    /**
     * {@link #qmatmulAccumulators(OpParams.QMatMul, float[], float[])} with a padded batch's key-padding mask (one
     * value per row of x, non-zero: left out of its group's range; null: every row counts).
     */
    public static long[] qmatmulAccumulators(OpParams.QMatMul p, float[] x, float[] padding, float[] rowScale) {
        int n = p.n(), k = p.k(), rows = x.length / k;
        int[] q = new int[x.length];
        int r0 = 0;
        for (int g : p.groupsOf(rows)) {
            float s = quantize(x, r0 * k, g * k, k, padding, r0, q)[0];
            for (int r = r0; r < r0 + g; r++) rowScale[r] = s;
            r0 += g;
        }
        byte[] w = p.weight().int8();
        long[] acc = new long[rows * n];
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < n; j++) {
                long sum = 0;
                int zw = p.zeroPoint(j);
                for (int t = 0; t < k; t++) sum += (long) q[r * k + t] * (w[t * n + j] - zw);
                if (sum != (int) sum) throw new ArithmeticException("qmatmul: an int32 accumulator overflows");
                acc[r * n + j] = sum;
            }
        return acc;
    }

    /** QMATMUL: the exact integer accumulation, then the one float product of the definition. */
    private static double[] qmatmul(Node node, double[] xd, double[] paddingD) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        float[] x = new float[xd.length];
        for (int i = 0; i < x.length; i++) x[i] = (float) xd[i]; // the input is float32 data
        float[] padding = null;
        if (paddingD != null) {
            padding = new float[paddingD.length];
            for (int i = 0; i < padding.length; i++) padding[i] = (float) paddingD[i];
        }
        int n = p.n(), rows = x.length / p.k();
        float[] rowScale = new float[rows];
        long[] acc = qmatmulAccumulators(p, x, padding, rowScale);
        double[] out = new double[acc.length];
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < n; j++) out[r * n + j] = (float) acc[r * n + j] * (rowScale[r] * p.scale(j));
        return out;
    }

    /** F.silu: {@code x sigmoid(x) = x / (1 + e^-x)} (x = -inf gives -0, as the limit). */
    private static double[] silu(double[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = x[i] / (1 + Math.exp(-x[i]));
        return out;
    }

    private static double[] gelu(double[] x, boolean tanh) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = gelu(x[i], tanh);
        return out;
    }

    /**
     * F.gelu: exact {@code x/2 (1 + erf(x/sqrt 2))}, computed as {@code x/2 erfc(-x/sqrt 2)} (the same function,
     * without cancellation for negative x); tanh form {@code x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))}.
     */
    public static double gelu(double x, boolean tanh) {
        if (tanh) {
            double u = Math.sqrt(2.0 / Math.PI) * (x + 0.044715 * x * x * x);
            return 0.5 * x * (1.0 + Math.tanh(u));
        }
        return 0.5 * x * Erf.erfc(-x / Math.sqrt(2.0));
    }

    /** nn.Embedding: out[..., :] = table[id, :]. */
    private static double[] embedding(Node n, double[] ids, double[] table) {
        int v = n.input(1).shape().dim(0), e = n.input(1).shape().dim(1);
        double[] out = new double[ids.length * e];
        for (int i = 0; i < ids.length; i++) {
            double id = ids[i];
            if (id != Math.rint(id) || id < 0 || id >= v)
                throw new IllegalArgumentException("embedding id " + id + " is not an integer in [0, " + v + ")");
            System.arraycopy(table, (int) id * e, out, i * e, e);
        }
        return out;
    }

    /** QEMBEDDING: DequantizeLinear's {@code (float) (q - zeroPoint) * scale} of each looked-up row. */
    private static double[] qembedding(Node n, double[] ids) {
        OpParams.QEmbedding p = n.params(OpParams.QEmbedding.class);
        int v = p.table().dim(0), e = p.table().dim(1);
        byte[] t = p.table().int8();
        int count = n.input(0).shape().size();
        double[] out = new double[count * e];
        for (int i = 0; i < count; i++) {
            double id = ids[i];
            if (id != Math.rint(id) || id < 0 || id >= v)
                throw new IllegalArgumentException("embedding id " + id + " is not an integer in [0, " + v + ")");
            for (int c = 0; c < e; c++) out[i * e + c] = (float) (t[(int) id * e + c] - p.zeroPoint()) * p.scale();
        }
        return out;
    }

    /** x + PE(offset + l): PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i), w_i = exp(-ln(10000) 2i / E). */
    private static double[] positionalEncoding(Node n, double[] x) {
        int offset = n.params(OpParams.PositionalEncoding.class).offset();
        Shape s = n.shape();
        int bN = s.dim(0), lN = s.dim(1), e = s.dim(2);
        double[] out = new double[x.length];
        for (int b = 0; b < bN; b++)
            for (int l = 0; l < lN; l++)
                for (int c = 0; c < e; c++) {
                    int idx = (b * lN + l) * e + c;
                    out[idx] = x[idx] + positionalEncoding(offset + l, c, e);
                }
        return out;
    }

    /** One entry of the sinusoidal table: position {@code pos}, channel {@code c} of {@code e}. */
    public static double positionalEncoding(int pos, int c, int e) {
        int i2 = c - (c % 2); // 2i
        double w = Math.exp(-Math.log(10000.0) * i2 / e);
        return c % 2 == 0 ? Math.sin(pos * w) : Math.cos(pos * w);
    }

    /** (B, L, H*D) -> (B, H, L, D). */
    private static double[] splitHeads(Node n, double[] x) {
        Shape s = n.shape(); // (B, H, L, D)
        int bN = s.dim(0), hN = s.dim(1), lN = s.dim(2), dN = s.dim(3);
        double[] out = new double[x.length];
        for (int b = 0; b < bN; b++)
            for (int h = 0; h < hN; h++)
                for (int l = 0; l < lN; l++)
                    for (int d = 0; d < dN; d++)
                        out[((b * hN + h) * lN + l) * dN + d] = x[(b * lN + l) * (hN * dN) + h * dN + d];
        return out;
    }

    /** (B, H, L, D) -> (B, L, H*D). */
    private static double[] mergeHeads(Node n, double[] x) {
        Shape s = n.input(0).shape();
        int bN = s.dim(0), hN = s.dim(1), lN = s.dim(2), dN = s.dim(3);
        double[] out = new double[x.length];
        for (int b = 0; b < bN; b++)
            for (int h = 0; h < hN; h++)
                for (int l = 0; l < lN; l++)
                    for (int d = 0; d < dN; d++)
                        out[(b * lN + l) * (hN * dN) + h * dN + d] = x[((b * hN + h) * lN + l) * dN + d];
        return out;
    }

    /** torch.cat(parts, axis). */
    private static double[] concat(Node n, double[][] parts) {
        int axis = n.params(OpParams.Concat.class).axis();
        Shape s = n.shape();
        int outer = 1, inner = 1;
        for (int i = 0; i < axis; i++) outer *= s.dim(i);
        for (int i = axis + 1; i < s.rank(); i++) inner *= s.dim(i);
        double[] out = new double[s.size()];
        int pos = 0; // offset along the axis
        for (int p = 0; p < parts.length; p++) {
            int len = n.input(p).shape().dim(axis);
            for (int o = 0; o < outer; o++)
                for (int a = 0; a < len; a++)
                    for (int i = 0; i < inner; i++)
                        out[(o * s.dim(axis) + pos + a) * inner + i] = parts[p][(o * len + a) * inner + i];
            pos += len;
        }
        return out;
    }

    /** x.mean(axis). */
    private static double[] mean(Node n, double[] x) {
        int axis = n.params(OpParams.Mean.class).axis();
        Shape s = n.input(0).shape();
        int outer = 1, inner = 1, len = s.dim(axis);
        for (int i = 0; i < axis; i++) outer *= s.dim(i);
        for (int i = axis + 1; i < s.rank(); i++) inner *= s.dim(i);
        double[] out = new double[outer * inner];
        for (int o = 0; o < outer; o++)
            for (int i = 0; i < inner; i++) {
                double sum = 0;
                for (int a = 0; a < len; a++) sum += x[(o * len + a) * inner + i];
                out[o * inner + i] = sum / len;
            }
        return out;
    }

    /** F.scaled_dot_product_attention: softmax(scale q k^T + masks) v, per (b, h, query). */
    private static double[] attention(Node n, double[][] in) {
        OpParams.Attention p = n.params(OpParams.Attention.class);
        Shape sq = n.input(0).shape(), sv = n.input(2).shape();
        int bN = sq.dim(0), hN = sq.dim(1), lN = sq.dim(2), dN = sq.dim(3), sN = sv.dim(2), dv = sv.dim(3);
        int group = hN / sv.dim(1); // grouped-query attention: query head h reads K/V head h / group
        double[] q = in[0], k = in[1], v = in[2];
        double[] out = new double[bN * hN * lN * dv];
        Masks masks = p.mask().any() ? new Masks(n, p.mask(), in, 3) : null;
        double[] row = new double[sN];
        for (int b = 0; b < bN; b++)
            for (int h = 0; h < hN; h++) {
                int bh = b * hN + h, kvh = b * (hN / group) + h / group;
                for (int i = 0; i < lN; i++) {
                    for (int j = 0; j < sN; j++) {
                        double dot = 0;
                        for (int d = 0; d < dN; d++) dot += q[(bh * lN + i) * dN + d] * k[(kvh * sN + j) * dN + d];
                        row[j] = (double) p.scale() * dot;
                    }
                    if (masks != null) masks.apply(row, b, h, i);
                    softmaxRow(row);
                    for (int c = 0; c < dv; c++) {
                        double acc = 0;
                        for (int j = 0; j < sN; j++) acc += row[j] * v[(kvh * sN + j) * dv + c];
                        out[(bh * lN + i) * dv + c] = acc;
                    }
                }
            }
        return out;
    }

    /** A copy of cache (B,H,C,D) with rows pos..pos+L-1 of each (b, h) replaced by x (B,H,L,D). */
    private static double[] cacheWrite(Node n, double[][] in) {
        Shape sc = n.input(0).shape(), sx = n.input(1).shape();
        int bh = sc.dim(0) * sc.dim(1), c = sc.dim(2), d = sc.dim(3), l = sx.dim(2);
        double pos = in[2][0];
        if (pos != Math.rint(pos) || pos < 0 || pos + l > c)
            throw new IllegalArgumentException("cache position " + pos + " is not an integer in [0, " + (c - l) + "]");
        double[] out = in[0].clone();
        for (int i = 0; i < bh; i++)
            for (int r = 0; r < l; r++)
                for (int j = 0; j < d; j++) out[(i * c + (int) pos + r) * d + j] = in[1][(i * l + r) * d + j];
        return out;
    }

    /** nn.RMSNorm / LlamaRMSNorm over the last dim: x / sqrt(mean(x^2) + eps) * w. */
    private static double[] rmsNorm(Node n, double[][] in) {
        OpParams.RmsNorm p = n.params(OpParams.RmsNorm.class);
        int e = n.shape().dim(-1), rows = n.shape().size() / Math.max(1, e);
        double[] x = in[0], w = p.hasWeight() ? in[1] : null;
        double[] out = new double[x.length];
        for (int r = 0; r < rows; r++) {
            double sq = 0;
            for (int j = 0; j < e; j++) sq += x[r * e + j] * x[r * e + j];
            double inv = 1.0 / Math.sqrt(sq / e + (double) p.eps());
            for (int j = 0; j < e; j++) out[r * e + j] = x[r * e + j] * inv * (w != null ? w[j] : 1.0);
        }
        return out;
    }

    /**
     * Rotary position embedding, transformers' rotate-half layout: for pair {@code i < R/2} of the first R =
     * rotaryDim dims, {@code out[i] = x[i] cos - x[i + R/2] sin}, {@code out[i + R/2] = x[i + R/2] cos + x[i] sin},
     * with cos and sin (in double) of the float32 angle {@link OpParams.Rope#angle} (the op's definition: transformers
     * forms the angle as a float32 product of the float32 inverse frequency and position); dims from R on are copied.
     */
    private static double[] rope(Node n, double[][] in) {
        OpParams.Rope p = n.params(OpParams.Rope.class);
        Shape s = n.shape();
        int bN = s.dim(0), hN = s.dim(1), lN = s.dim(2), dN = s.dim(3), half = p.rotaryDim() / 2;
        double[] x = in[0], out = x.clone();
        for (int b = 0; b < bN; b++)
            for (int l = 0; l < lN; l++) {
                int pos = ropePosition(p, in, b, l, lN);
                for (int i = 0; i < half; i++) {
                    double a = OpParams.Rope.angle(pos, p.invFreq(i)), c = Math.cos(a), sn = Math.sin(a);
                    for (int h = 0; h < hN; h++) {
                        int o = ((b * hN + h) * lN + l) * dN;
                        double x1 = x[o + i], x2 = x[o + i + half];
                        out[o + i] = x1 * c - x2 * sn;
                        out[o + i + half] = x2 * c + x1 * sn;
                    }
                }
            }
        return out;
    }

    /** The position of token (b, l) of a ROPE node; IllegalArgumentException for a non-integral or out-of-range one. */
    private static int ropePosition(OpParams.Rope p, double[][] in, int b, int l, int lN) {
        double pos =
                switch (p.positions()) {
                    case RANGE -> (double) p.offset() + l;
                    case START -> p.offset() + in[1][0] + l;
                    case IDS -> p.offset() + in[1][b * lN + l];
                };
        if (pos != Math.rint(pos) || pos < 0 || pos > OpParams.Rope.MAX_POSITION)
            throw new IllegalArgumentException(
                    "rope position " + pos + " is not an integer in [0, " + OpParams.Rope.MAX_POSITION + "]");
        return (int) pos;
    }

    /** GLU: act(a) * g over the two halves of the last dim (act as {@link #silu} and {@link #gelu(double, boolean)}). */
    private static double[] glu(Node n, double[] x) {
        OpParams.Glu p = n.params(OpParams.Glu.class);
        int f = n.shape().dim(-1), rows = n.shape().size() / Math.max(1, f);
        double[] out = new double[rows * f];
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < f; j++) {
                double first = x[r * 2 * f + j], second = x[r * 2 * f + f + j];
                double a = p.activatedFirst() ? first : second, g = p.activatedFirst() ? second : first;
                double act =
                        switch (p.act()) {
                            case SILU -> a / (1 + Math.exp(-a));
                            case GELU -> gelu(a, false);
                            case GELU_TANH -> gelu(a, true);
                        };
                out[r * f + j] = act * g;
            }
        return out;
    }
}
