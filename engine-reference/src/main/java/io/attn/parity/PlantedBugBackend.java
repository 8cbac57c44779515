package io.attn.parity;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;

/**
 * The judge's own test subject: a backend with plain scalar float32 loops that can carry one deliberate bug (a {@link
 * Breakage} other than NONE), so that the parity suite can show that it catches each kind of bug it claims to catch
 * (BrokenBackendTest, and {@code attn parity --planted} on any host). Not registered as a service; never used to
 * compute results.
 */
public final class PlantedBugBackend implements Backend {
    /** Deliberate bugs. */
    public enum Breakage {
        NONE,
        SOFTMAX_WRONG_AXIS, // normalises over dim -2 instead of the last dim
        ATTENTION_IGNORES_CAUSAL,
        ADD_WRITES_PAST_END, // writes one element after the output
        SCALE_SKIPS_LAST, // leaves the last output element unwritten
        SCALE_WRITES_INPUT, // scales its input in place and copies it
        MASKED_ROW_UNIFORM, // masks with -1e9 instead of -inf: an all-masked row becomes uniform
        MASKED_ROW_NAN, // PyTorch's math path: an all-masked row becomes NaN
        SOFTMAX_NO_MAX_SUBTRACTION,
        MASK_IGNORES_BROADCAST, // reads a (B|1,H|1,L,S) mask as if it were (L,S)
        LAYER_NORM_ONE_PASS_VARIANCE, // E[x^2] - E[x]^2 in float
        GELU_TANH_OVERFLOW, // tanh(u) = (e^2u - 1)/(e^2u + 1): inf/inf = NaN for large u
        PE_IGNORES_OFFSET,
        SPLIT_HEADS_AS_RESHAPE, // reshape without the transpose
        MATMUL_IGNORES_ALPHA,
        RAGGED_SEES_OTHER_SEQUENCES, // a ragged batch attended as one long sequence
        ATTENTION_TILES_NOT_RESCALED, // flash-style 32-key tiles that never rescale earlier ones when the max grows
        ATTENTION_READS_64_DIMS, // q.k over the first 64 components only (a kernel holding 64 floats of a query)
        RMS_NORM_EPS_OUTSIDE_SQRT, // x / (sqrt(mean(x^2)) + eps): differs where eps is not small against mean(x^2)
        ROPE_INTERLEAVED, // GPT-J's layout: pairs (2i, 2i+1) instead of transformers' rotate-half (i, i + R/2)
        GLU_ACTIVATES_FIRST_HALF, // ignores which half is activated: always act(x[..., :F]) * x[..., F:]
        GQA_HEAD_MODULO, // grouped-query attention: query head h reads K/V head h % Hkv (repeat, not repeat_interleave)
        WINDOW_OFF_BY_ONE, // a sliding window one key wider on each side: i - left - 1 <= j <= i + right + 1
        RELATIVE_BIAS_TRANSPOSED // a relative bias read at the offset i - j (the query's from the key) instead of j - i
    }

    record Buf(float[] a) implements Buffer {
        public DType dtype() {
            return DType.F32;
        }

        public long capacity() {
            return a.length;
        }
    }

    private final Breakage bug;

    public PlantedBugBackend(Breakage bug) {
        this.bug = bug;
    }

    public PlantedBugBackend() {
        this(Breakage.NONE);
    }

    public String name() {
        return bug == Breakage.NONE ? "naive" : "naive-" + bug.name().toLowerCase(java.util.Locale.ROOT);
    }

    public String description() {
        return "test-only scalar float loops";
    }

    public boolean supports(Node node) {
        return true;
    }

    public Buffer allocate(DType dtype, long elements) {
        return new Buf(new float[Math.toIntExact(elements)]);
    }

    public void upload(float[] src, int count, Buffer dst) {
        System.arraycopy(src, 0, ((Buf) dst).a, 0, count);
    }

    public void download(Buffer src, float[] dst, int count) {
        System.arraycopy(((Buf) src).a, 0, dst, 0, count);
    }

    @Override
    public Buffer hostView(float[] data) {
        return new Buf(data);
    }

    public void close() {}

    public void execute(Node n, Buffer out, Buffer[] inputs) {
        float[] o = ((Buf) out).a;
        float[][] in = new float[inputs.length][];
        for (int i = 0; i < in.length; i++) in[i] = ((Buf) inputs[i]).a;
        int size = n.shape().size();
        // "case null" makes this an enhanced switch, which javac requires to be exhaustive: a new Op breaks this build
        switch (n.op()) {
            case null -> throw new IllegalStateException(n + " has no op");
            case INPUT, CONSTANT -> throw new IllegalArgumentException("leaves are not executed");
            case MATMUL -> matmul(n, in[0], in[1], o);
            case ADD_BIAS -> {
                int e = n.shape().dim(-1);
                for (int i = 0; i < size; i++) o[i] = in[0][i] + in[1][i % e];
            }
            case ADD -> {
                for (int i = 0; i < size; i++) o[i] = in[0][i] + in[1][i];
                if (bug == Breakage.ADD_WRITES_PAST_END) o[size] = 0f;
            }
            case SCALE -> {
                float f = n.params(OpParams.Scale.class).factor();
                int end = bug == Breakage.SCALE_SKIPS_LAST ? size - 1 : size;
                for (int i = 0; i < end; i++) o[i] = in[0][i] * f;
                if (bug == Breakage.SCALE_WRITES_INPUT) in[0][0] = o[0];
            }
            case SOFTMAX -> softmax(n, in, o);
            case LAYER_NORM -> layerNorm(n, in, o);
            case RELU -> {
                for (int i = 0; i < size; i++) o[i] = Math.max(in[0][i], 0f);
            }
            case SILU -> {
                for (int i = 0; i < size; i++) o[i] = in[0][i] / (1f + (float) Math.exp(-in[0][i]));
            }
            case GELU -> {
                boolean tanh = n.params(OpParams.Gelu.class).tanh();
                for (int i = 0; i < size; i++) o[i] = gelu(in[0][i], tanh);
            }
            case EMBEDDING -> {
                int e = n.input(1).shape().dim(1);
                for (int i = 0; i < in[0].length; i++) System.arraycopy(in[1], (int) in[0][i] * e, o, i * e, e);
            }
            case POSITIONAL_ENCODING -> positions(n, in[0], o);
            case SPLIT_HEADS -> {
                Shape s = n.shape();
                if (bug == Breakage.SPLIT_HEADS_AS_RESHAPE) System.arraycopy(in[0], 0, o, 0, size);
                else moveHeads(in[0], o, s.dim(0), s.dim(1), s.dim(2), s.dim(3), true);
            }
            case MERGE_HEADS -> {
                Shape s = n.input(0).shape();
                moveHeads(in[0], o, s.dim(0), s.dim(1), s.dim(2), s.dim(3), false);
            }
            case CONCAT -> concat(n, in, o);
            case MEAN -> mean(n, in[0], o);
            case ATTENTION -> attention(n, in, o);
            case CACHE_WRITE -> {
                Shape c = n.input(0).shape();
                int rows = n.input(1).shape().dim(2), d = c.dim(3), p = (int) in[2][0];
                if (o != in[0]) System.arraycopy(in[0], 0, o, 0, size);
                for (int i = 0; i < c.dim(0) * c.dim(1); i++)
                    System.arraycopy(in[1], i * rows * d, o, (i * c.dim(2) + p) * d, rows * d);
            }
            case RMS_NORM -> rmsNorm(n, in, o);
            case ROPE -> rope(n, in, o);
            case GLU -> glu(n, in[0], o);
            case QEMBEDDING -> {
                OpParams.QEmbedding p = n.params(OpParams.QEmbedding.class);
                int e = p.table().dim(1);
                for (int i = 0; i < n.input(0).shape().size(); i++)
                    for (int c = 0; c < e; c++)
                        o[i * e + c] = (float) (p.table().int8()[(int) in[0][i] * e + c] - p.zeroPoint()) * p.scale();
            }
            case QMATMUL -> {
                OpParams.QMatMul p = n.params(OpParams.QMatMul.class);
                float[] x = java.util.Arrays.copyOf(in[0], n.input(0).shape().size());
                float[] rowScale = new float[x.length / p.k()];
                float[] pad = in.length > 1
                        ? java.util.Arrays.copyOf(in[1], n.input(1).shape().size())
                        : null;
                long[] acc = io.attn.reference.Reference.qmatmulAccumulators(p, x, pad, rowScale);
                for (int i = 0; i < size; i++) o[i] = (float) acc[i] * (rowScale[i / p.n()] * p.scale(i % p.n()));
            }
        }
    }

    private void rmsNorm(Node n, float[][] in, float[] o) {
        OpParams.RmsNorm p = n.params(OpParams.RmsNorm.class);
        int e = n.shape().dim(-1), rows = n.shape().size() / e;
        float[] x = in[0], w = p.hasWeight() ? in[1] : null;
        for (int r = 0; r < rows; r++) {
            float sq = 0f;
            for (int j = 0; j < e; j++) sq += x[r * e + j] * x[r * e + j];
            float inv = bug == Breakage.RMS_NORM_EPS_OUTSIDE_SQRT
                    ? (float) (1.0 / (Math.sqrt(sq / e) + p.eps()))
                    : (float) (1.0 / Math.sqrt(sq / e + p.eps()));
            for (int j = 0; j < e; j++) o[r * e + j] = x[r * e + j] * inv * (w != null ? w[j] : 1f);
        }
    }

    private void rope(Node n, float[][] in, float[] o) {
        OpParams.Rope p = n.params(OpParams.Rope.class);
        Shape s = n.shape();
        int bN = s.dim(0), hN = s.dim(1), lN = s.dim(2), dN = s.dim(3), half = p.rotaryDim() / 2;
        System.arraycopy(in[0], 0, o, 0, s.size());
        for (int b = 0; b < bN; b++)
            for (int l = 0; l < lN; l++) {
                int pos = p.offset()
                        + switch (p.positions()) {
                            case RANGE -> l;
                            case START -> (int) in[1][0] + l;
                            case IDS -> (int) in[1][b * lN + l];
                        };
                for (int i = 0; i < half; i++) {
                    float a = OpParams.Rope.angle(pos, p.invFreq(i));
                    float c = (float) Math.cos(a), sn = (float) Math.sin(a);
                    // the pair (i1, i2) rotated by this frequency
                    int i1 = bug == Breakage.ROPE_INTERLEAVED ? 2 * i : i;
                    int i2 = bug == Breakage.ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
                    for (int h = 0; h < hN; h++) {
                        int off = ((b * hN + h) * lN + l) * dN;
                        float x1 = in[0][off + i1], x2 = in[0][off + i2];
                        o[off + i1] = x1 * c - x2 * sn;
                        o[off + i2] = x2 * c + x1 * sn;
                    }
                }
            }
    }

    private void glu(Node n, float[] x, float[] o) {
        OpParams.Glu p = n.params(OpParams.Glu.class);
        int f = n.shape().dim(-1), rows = n.shape().size() / f;
        boolean first = p.activatedFirst() || bug == Breakage.GLU_ACTIVATES_FIRST_HALF;
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < f; j++) {
                float a = x[r * 2 * f + (first ? j : f + j)], g = x[r * 2 * f + (first ? f + j : j)];
                float act =
                        switch (p.act()) {
                            case SILU -> a / (1f + (float) Math.exp(-a));
                            case GELU -> gelu(a, false);
                            case GELU_TANH -> gelu(a, true);
                        };
                o[r * f + j] = act * g;
            }
    }

    private void matmul(Node n, float[] a, float[] b, float[] o) {
        OpParams.MatMul p = n.params(OpParams.MatMul.class);
        Shape sa = n.input(0).shape(), sb = n.input(1).shape();
        int ar = sa.dim(-2), ac = sa.dim(-1), br = sb.dim(-2), bc = sb.dim(-1);
        int m = p.transA() ? ac : ar, k = p.transA() ? ar : ac, nn = p.transB() ? br : bc;
        float alpha = bug == Breakage.MATMUL_IGNORES_ALPHA ? 1f : p.alpha();
        for (int t = 0; t < sa.leading(2); t++) {
            int ao = t * ar * ac, bo = sb.rank() == 2 ? 0 : t * br * bc, oo = t * m * nn;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < nn; j++) {
                    float s = 0f;
                    for (int x = 0; x < k; x++)
                        s += (p.transA() ? a[ao + x * ac + i] : a[ao + i * ac + x])
                                * (p.transB() ? b[bo + j * bc + x] : b[bo + x * bc + j]);
                    o[oo + i * nn + j] = alpha * s;
                }
        }
    }

    private void softmax(Node n, float[][] in, float[] o) {
        OpParams.Softmax p = n.params(OpParams.Softmax.class);
        float[] x = in[0];
        Shape s = n.shape();
        int cols = s.dim(-1), rows = s.size() / cols;
        float[] row = new float[cols];
        if (bug == Breakage.SOFTMAX_WRONG_AXIS && s.rank() >= 2) {
            int r2 = s.dim(-2), outer = s.size() / (r2 * cols);
            float[] col = new float[r2];
            for (int t = 0; t < outer; t++)
                for (int j = 0; j < cols; j++) {
                    for (int i = 0; i < r2; i++) col[i] = p.scale() * x[(t * r2 + i) * cols + j];
                    softmaxRow(col);
                    for (int i = 0; i < r2; i++) o[(t * r2 + i) * cols + j] = col[i];
                }
            return;
        }
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < cols; j++) row[j] = p.scale() * x[r * cols + j];
            if (p.mask().any())
                mask(
                        n,
                        p.mask(),
                        in,
                        p.firstMask(),
                        row,
                        r / (s.dim(1) * s.dim(2)),
                        (r / s.dim(2)) % s.dim(1),
                        r % s.dim(2));
            softmaxRow(row);
            System.arraycopy(row, 0, o, r * cols, cols);
        }
    }

    private void mask(Node n, MaskSpec spec, float[][] in, int first, float[] row, int b, int h, int i) {
        int s = row.length, l = n.shape().dim(2);
        float dead = bug == Breakage.MASKED_ROW_UNIFORM ? -1e9f : Float.NEGATIVE_INFINITY;
        int next = first;
        for (int j = 0; j < s; j++) {
            boolean causalOn = spec.causal() && !(bug == Breakage.ATTENTION_IGNORES_CAUSAL && n.op() == Op.ATTENTION);
            if (causalOn && j > i) row[j] = dead;
        }
        if (spec.windowed()) {
            // the window alone (the causal rule is applied above, or not, by ATTENTION_IGNORES_CAUSAL)
            int extra = bug == Breakage.WINDOW_OFF_BY_ONE ? 1 : 0;
            long left = spec.windowLeft() == MaskSpec.UNBOUNDED ? s : spec.windowLeft(),
                    right = spec.windowRight() == MaskSpec.UNBOUNDED ? s : spec.windowRight();
            for (int j = 0; j < s; j++) if (j < i - left - extra || j > i + right + extra) row[j] = dead;
        }
        if (spec.segmented() && bug != Breakage.RAGGED_SEES_OTHER_SEQUENCES) {
            // keys outside the query's own sequence: the block-diagonal mask of a ragged batch
            int from = 0;
            for (int len : spec.segmentLengths()) {
                if (i < from + len) {
                    for (int j = 0; j < s; j++) if (j < from || j >= from + len) row[j] = dead;
                    break;
                }
                from += len;
            }
        }
        if (spec.attnMask() != MaskKind.NONE) {
            Shape ms = n.input(next).shape();
            float[] m = in[next++];
            for (int j = 0; j < s; j++) {
                int idx = i * s + j;
                if (spec.relativeBias()) {
                    int offset = bug == Breakage.RELATIVE_BIAS_TRANSPOSED ? i - j : j - i;
                    // (H|1, L + S - 1); the transposed read stays inside its head's row only where L == S
                    idx = (ms.dim(0) == 1 ? 0 : h) * (l + s - 1) + Math.floorMod(offset + l - 1, l + s - 1);
                } else if (ms.rank() == 4 && bug != Breakage.MASK_IGNORES_BROADCAST) {
                    int mb = ms.dim(0) == 1 ? 0 : b, mh = ms.dim(1) == 1 ? 0 : h;
                    idx = ((mb * ms.dim(1) + mh) * l + i) * s + j;
                }
                row[j] = spec.attnMask() == MaskKind.BOOL ? (m[idx] != 0 ? dead : row[j]) : row[j] + m[idx];
            }
        }
        if (spec.keyPadding() != MaskKind.NONE) {
            float[] m = in[next];
            for (int j = 0; j < s; j++)
                row[j] = spec.keyPadding() == MaskKind.BOOL
                        ? (m[b * s + j] != 0 ? dead : row[j])
                        : row[j] + m[b * s + j];
        }
    }

    private void softmaxRow(float[] row) {
        float max = Float.NEGATIVE_INFINITY;
        for (float v : row) max = Math.max(max, v);
        if (bug == Breakage.SOFTMAX_NO_MAX_SUBTRACTION) max = 0f;
        else if (max == Float.NEGATIVE_INFINITY) {
            java.util.Arrays.fill(row, bug == Breakage.MASKED_ROW_NAN ? Float.NaN : 0f);
            return;
        }
        float sum = 0f;
        for (int j = 0; j < row.length; j++) {
            row[j] = (float) Math.exp(row[j] - max);
            sum += row[j];
        }
        for (int j = 0; j < row.length; j++) row[j] /= sum;
    }

    private void layerNorm(Node n, float[][] in, float[] o) {
        OpParams.LayerNorm p = n.params(OpParams.LayerNorm.class);
        int e = n.shape().dim(-1), rows = n.shape().size() / e;
        float[] x = in[0], w = p.hasWeight() ? in[1] : null, b = p.hasBias() ? in[p.hasWeight() ? 2 : 1] : null;
        for (int r = 0; r < rows; r++) {
            float mean = 0f, sq = 0f;
            for (int j = 0; j < e; j++) {
                mean += x[r * e + j];
                sq += x[r * e + j] * x[r * e + j];
            }
            mean /= e;
            float var = 0f;
            if (bug == Breakage.LAYER_NORM_ONE_PASS_VARIANCE) var = Math.max(0f, sq / e - mean * mean);
            else {
                for (int j = 0; j < e; j++) var += (x[r * e + j] - mean) * (x[r * e + j] - mean);
                var /= e;
            }
            float inv = (float) (1.0 / Math.sqrt(var + p.eps()));
            for (int j = 0; j < e; j++) {
                float y = (x[r * e + j] - mean) * inv;
                if (w != null) y *= w[j];
                if (b != null) y += b[j];
                o[r * e + j] = y;
            }
        }
    }

    private float gelu(float x, boolean tanh) {
        if (tanh) {
            float u = 0.7978845608f * (x + 0.044715f * x * x * x);
            float t;
            if (bug == Breakage.GELU_TANH_OVERFLOW) {
                float e2 = (float) Math.exp(2 * u);
                t = (e2 - 1f) / (e2 + 1f);
            } else t = (float) Math.tanh(u);
            return 0.5f * x * (1f + t);
        }
        return 0.5f * x * (1f + erfAS(x * 0.70710678f));
    }

    // Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): independent of the reference's erf
    private static float erfAS(float x) {
        double a = Math.abs(x), t = 1.0 / (1.0 + 0.3275911 * a);
        double y = 1.0
                - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592)
                        * t
                        * Math.exp(-a * a);
        return (float) (x < 0 ? -y : y);
    }

    private void positions(Node n, float[] x, float[] o) {
        int offset = bug == Breakage.PE_IGNORES_OFFSET
                ? 0
                : n.params(OpParams.PositionalEncoding.class).offset();
        Shape s = n.shape();
        int bN = s.dim(0), lN = s.dim(1), e = s.dim(2);
        for (int b = 0; b < bN; b++)
            for (int l = 0; l < lN; l++)
                for (int c = 0; c < e; c++) {
                    float w = (float) Math.exp(-Math.log(10000.0) * (c & ~1) / e);
                    float arg = (offset + l) * w;
                    float pe = (float) ((c & 1) == 0 ? Math.sin(arg) : Math.cos(arg));
                    int idx = (b * lN + l) * e + c;
                    o[idx] = x[idx] + pe;
                }
    }

    private static void moveHeads(float[] x, float[] o, int bN, int hN, int lN, int dN, boolean split) {
        for (int b = 0; b < bN; b++)
            for (int h = 0; h < hN; h++)
                for (int l = 0; l < lN; l++)
                    for (int d = 0; d < dN; d++) {
                        int bhld = ((b * hN + h) * lN + l) * dN + d, blhd = (b * lN + l) * hN * dN + h * dN + d;
                        if (split) o[bhld] = x[blhd];
                        else o[blhd] = x[bhld];
                    }
    }

    private static void concat(Node n, float[][] in, float[] o) {
        int axis = n.params(OpParams.Concat.class).axis();
        Shape s = n.shape();
        int outer = s.leading(s.rank() - axis), inner = s.size() / (outer * s.dim(axis)), at = 0;
        for (int p = 0; p < in.length; p++) {
            int len = n.input(p).shape().dim(axis);
            for (int t = 0; t < outer; t++)
                System.arraycopy(in[p], t * len * inner, o, (t * s.dim(axis) + at) * inner, len * inner);
            at += len;
        }
    }

    private static void mean(Node n, float[] x, float[] o) {
        int axis = n.params(OpParams.Mean.class).axis();
        Shape s = n.input(0).shape();
        int outer = s.leading(s.rank() - axis), len = s.dim(axis), inner = s.size() / (outer * len);
        for (int t = 0; t < outer; t++)
            for (int i = 0; i < inner; i++) {
                float sum = 0f;
                for (int a = 0; a < len; a++) sum += x[(t * len + a) * inner + i];
                o[t * inner + i] = sum / len;
            }
    }

    /**
     * One query row of attention the flash way, over tiles of 32 keys with a running max, sum and accumulator, but with
     * the bug: when a tile raises the running max, what earlier tiles accumulated is not scaled down by exp(old - new).
     * Right for a single tile, and whenever the first tile holds the row's max.
     */
    private static void unrescaledTiles(float[] row, float[] v, int vOff, int dv, float[] o, int oOff) {
        float max = Float.NEGATIVE_INFINITY, sum = 0f;
        float[] acc = new float[dv];
        for (int t0 = 0; t0 < row.length; t0 += 32) {
            int t1 = Math.min(row.length, t0 + 32);
            for (int j = t0; j < t1; j++) max = Math.max(max, row[j]);
            if (max == Float.NEGATIVE_INFINITY) continue; // every key so far masked
            // (the right kernel multiplies sum and acc by exp(previous max - max) here)
            for (int j = t0; j < t1; j++) {
                float p = (float) Math.exp(row[j] - max);
                sum += p;
                for (int c = 0; c < dv; c++) acc[c] += p * v[vOff + j * dv + c];
            }
        }
        for (int c = 0; c < dv; c++) o[oOff + c] = sum == 0f ? 0f : acc[c] / sum;
    }

    private void attention(Node n, float[][] in, float[] o) {
        OpParams.Attention p = n.params(OpParams.Attention.class);
        Shape sq = n.input(0).shape(), sv = n.input(2).shape();
        int bN = sq.dim(0), hN = sq.dim(1), lN = sq.dim(2), dN = sq.dim(3), sN = sv.dim(2), dv = sv.dim(3);
        int hkv = sv.dim(1), group = hN / hkv;
        float[] row = new float[sN];
        for (int b = 0; b < bN; b++)
            for (int h = 0; h < hN; h++) {
                int bh = b * hN + h;
                int kvh = b * hkv + (bug == Breakage.GQA_HEAD_MODULO ? h % hkv : h / group); // K/V (b, head)
                for (int i = 0; i < lN; i++) {
                    int dots = bug == Breakage.ATTENTION_READS_64_DIMS ? Math.min(dN, 64) : dN;
                    for (int j = 0; j < sN; j++) {
                        float dot = 0f;
                        for (int d = 0; d < dots; d++)
                            dot += in[0][(bh * lN + i) * dN + d] * in[1][(kvh * sN + j) * dN + d];
                        row[j] = p.scale() * dot;
                    }
                    if (p.mask().any()) mask(n, p.mask(), in, 3, row, b, h, i);
                    if (bug == Breakage.ATTENTION_TILES_NOT_RESCALED) {
                        unrescaledTiles(row, in[2], kvh * sN * dv, dv, o, (bh * lN + i) * dv);
                        continue;
                    }
                    softmaxRow(row);
                    for (int c = 0; c < dv; c++) {
                        float acc = 0f;
                        for (int j = 0; j < sN; j++) acc += row[j] * in[2][(kvh * sN + j) * dv + c];
                        o[(bh * lN + i) * dv + c] = acc;
                    }
                }
            }
    }
}
