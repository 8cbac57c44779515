package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * SOFTMAX over the last dim of {@code scale * x} plus masks. Each row is first written to {@code out} as masked scaled
 * scores ({@link Masks}), then max-subtracted, exponentiated and normalised in place. A row with every key masked (max
 * {@code -inf}) becomes all zeros.
 */
public final class Softmax {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    private Softmax() {}

    /** Query rows per block of the product form: their scores (rows x S) stay in L2 between product and softmax. */
    static final int PRODUCT_ROWS = 128;

    private static final Parallel SERIAL = new Parallel(1);

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        OpParams.Softmax p = node.params(OpParams.Softmax.class);
        Shape sh = node.shape();
        int n = sh.dim(-1), rows = sh.leading(1);
        float[] x = in[0];
        float scale = p.scale();
        if (!p.mask().any()) {
            par.forRange(rows, Math.max(1, Elementwise.GRAIN / Math.max(1, n)), (from, to) -> {
                for (int r = from; r < to; r++) row(out, x, r * n, n, scale, null, 0, 0, 0);
            });
            return;
        }
        int hh = sh.dim(1), l = sh.dim(2);
        Masks masks = new Masks(p.mask(), node, in, p.firstMask(), l, n);
        par.forRange(rows, Math.max(1, Elementwise.GRAIN / Math.max(1, n)), (from, to) -> {
            for (int r = from; r < to; r++) row(out, x, r * n, n, scale, masks, r / (l * hh), (r / l) % hh, r % l);
        });
    }

    /**
     * One row: {@code out[o..o+n) = softmax(scale * x[o..o+n) + masks)} for query {@code i} of head {@code (b, h)};
     * {@code masks} null for none. {@code x} may be {@code out} (in place).
     */
    private static void row(float[] out, float[] x, int o, int n, float scale, Masks masks, int b, int h, int i) {
        if (masks == null) {
            normalise(out, o, n, scaleRow(out, x, o, n, scale));
            return;
        }
        if (x != out) System.arraycopy(x, o, out, o, n);
        masks.apply(out, o, n, b, h, i, 0, scale);
        normalise(out, o, n);
    }

    /**
     * The attention weights: MATMUL node {@code product} ({@code q k^T}, unscaled) and then SOFTMAX node {@code node}
     * over it, as one step ({@link Fusions}). For each (batch entry, block of {@link #PRODUCT_ROWS} query rows), the
     * block's scores are computed straight into {@code out} on one thread ({@link Gemm}: each element is the same FMA
     * sequence as the MATMUL op gives it, whatever the block) and normalised right away, while they are still in
     * cache; the two ops one by one would write the whole score tensor to memory, read it back and write it again.
     * Blocks are fixed by the shape, not the thread count. {@code in} holds the softmax node's inputs (its first, the
     * scores, unused), so that its masks are at their node positions.
     */
    public static void runProduct(
            Parallel par, Node product, Node node, float[] out, float[] q, float[] k, float[][] in) {
        OpParams.Softmax p = node.params(OpParams.Softmax.class);
        Shape sq = product.input(0).shape(), sh = node.shape();
        int l = sq.dim(-2), d = sq.dim(-1), n = sh.dim(-1), batch = sq.leading(2);
        if ((long) batch * l * n == 0) return;
        float scale = p.scale();
        Masks masks = p.mask().any() ? new Masks(p.mask(), node, in, p.firstMask(), l, n) : null;
        int hh = sh.rank() == 4 ? sh.dim(1) : 1;
        if (l <= Gemv.MAX_M) { // 1-4 queries: the batched product as the MATMUL op runs it, then the rows
            Gemm.gemm(par, batch, l, n, d, 1f, q, 0, l * d, false, k, 0, n * d, true, out, 0, l * n);
            par.forEach(batch, e -> {
                for (int r = 0; r < l; r++) row(out, out, (e * l + r) * n, n, scale, masks, e / hh, e % hh, r);
            });
            return;
        }
        int whole = (l + PRODUCT_ROWS - 1) / PRODUCT_ROWS;
        // a last block of 1-4 rows would be a product of few rows (Gemm's dot products) where the MATMUL op runs the
        // GEMM's tiles over all l rows: it joins the block before it
        int blocks = whole > 1 && l - (whole - 1) * PRODUCT_ROWS <= Gemv.MAX_M ? whole - 1 : whole;
        par.forEach(batch * blocks, t -> {
            int e = t / blocks, i0 = (t % blocks) * PRODUCT_ROWS;
            int rows = t % blocks == blocks - 1 ? l - i0 : PRODUCT_ROWS;
            int o0 = (e * l + i0) * n;
            Gemm.gemm(SERIAL, 1, rows, n, d, 1f, q, (e * l + i0) * d, 0, false, k, e * n * d, 0, true, out, o0, 0);
            for (int r = 0; r < rows; r++) row(out, out, o0 + r * n, n, scale, masks, e / hh, e % hh, i0 + r);
        });
    }

    /**
     * {@code out[o + c] = clamp(x[o + c] * scale)} to {@code [-MAX_VALUE, MAX_VALUE]} (NaN stays NaN), in one pass that
     * also returns the row's max ({@link #max}'s value). Clamps and max by compare-and-blend: Java's lanewise MIN/MAX
     * carry NaN and signed-zero rules that cost several instructions each on x86.
     */
    private static float scaleRow(float[] out, float[] x, int o, int n, float scale) {
        final float big = Float.MAX_VALUE;
        int c = 0;
        FloatVector m = FloatVector.broadcast(SP, Float.NEGATIVE_INFINITY);
        for (int ub = SP.loopBound(n); c < ub; c += SP.length()) {
            FloatVector v = FloatVector.fromArray(SP, x, o + c).mul(scale);
            v = v.blend(-big, v.compare(VectorOperators.LT, -big)).blend(big, v.compare(VectorOperators.GT, big));
            v.intoArray(out, o + c);
            m = m.blend(v, m.compare(VectorOperators.LT, v));
        }
        float r = m.reduceLanes(VectorOperators.MAX); // exact in any order; Lanes.max here was left out of line by C2
        for (; c < n; c++) {
            float v = Math.min(big, Math.max(-big, x[o + c] * scale));
            out[o + c] = v;
            r = Math.max(r, v);
        }
        // the blends skip NaN; Java's max keeps it, and a NaN row must not pass for a fully masked one
        return r == Float.NEGATIVE_INFINITY || Float.isNaN(r) ? max(out, o, n) : r;
    }

    /** In place: {@code row = exp(row - max) / sum}; all zeros when the max is {@code -inf}. */
    static void normalise(float[] row, int o, int n) {
        normalise(row, o, n, max(row, o, n));
    }

    /** {@link #normalise(float[], int, int)} with the row's max already known. */
    private static void normalise(float[] row, int o, int n, float max) {
        if (max == Float.NEGATIVE_INFINITY) {
            java.util.Arrays.fill(row, o, o + n, 0f);
            return;
        }
        float sum = expSub(row, o, n, max);
        float inv = 1f / sum;
        int c = 0;
        for (int ub = SP.loopBound(n); c < ub; c += SP.length())
            FloatVector.fromArray(SP, row, o + c).mul(inv).intoArray(row, o + c);
        for (; c < n; c++) row[o + c] *= inv;
    }

    static float max(float[] row, int o, int n) {
        int c = 0;
        FloatVector m = FloatVector.broadcast(SP, Float.NEGATIVE_INFINITY);
        for (int ub = SP.loopBound(n); c < ub; c += SP.length()) m = m.max(FloatVector.fromArray(SP, row, o + c));
        float r = m.reduceLanes(VectorOperators.MAX);
        for (; c < n; c++) r = Math.max(r, row[o + c]);
        return r;
    }

    /** In place {@code row = exp(row - max)}; returns the sum. */
    static float expSub(float[] row, int o, int n, float max) {
        int c = 0;
        FloatVector acc = FloatVector.zero(SP);
        for (int ub = SP.loopBound(n); c < ub; c += SP.length()) {
            FloatVector e =
                    VExp.expNonPositive(FloatVector.fromArray(SP, row, o + c).sub(max));
            e.intoArray(row, o + c);
            acc = acc.add(e);
        }
        float sum = Lanes.sum(acc); // fixed order: bitwise the same interpreted and compiled
        for (; c < n; c++) {
            float e = (float) Math.exp(row[o + c] - max);
            row[o + c] = e;
            sum += e;
        }
        return sum;
    }
}
