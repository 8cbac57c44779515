package io.attn.cpu.ops;

import io.attn.AttnException;
import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import java.util.concurrent.ConcurrentHashMap;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * ROPE, transformers' rotate-half layout, on x {@code (B, H, L, D)}: for pair {@code i < R/2} of the first R =
 * rotaryDim dims, {@code out[i] = x[i] c - x[i + R/2] s} and {@code out[i + R/2] = x[i + R/2] c + x[i] s} (the products
 * rounded, then the sum: transformers' {@code q * cos + rotate_half(q) * sin} in float32), the other dims copied.
 *
 * <p>{@code c} and {@code s} are the cos and sin (in double, rounded once) of the float32 angle {@link
 * OpParams.Rope#angle}, read from a table per (theta, rotary dim) of positions 0 .. N-1 kept for the JVM's life (grown
 * by doubling as longer inputs come, up to {@value #MAX_CACHED} floats per array; positions past it get a table of
 * their own per call), so a forward pass does no trigonometry: the op is a streaming multiply-add over x.
 */
public final class Rope {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    /** The most floats one cached cos (or sin) table holds: 8 MB. */
    static final int MAX_CACHED = 1 << 21;

    /** cos and sin of positions 0 .. rows-1 (or of given positions), {@code half} pairs per row. */
    record Table(int rows, int half, float[] cos, float[] sin) {}

    /** What a table depends on: the frequencies (theta, rotary dim, scaling). */
    private record Key(float theta, int rotaryDim, OpParams.Rope.Scaling scaling) {}

    private static final ConcurrentHashMap<Key, Table> TABLES = new ConcurrentHashMap<>();

    private Rope() {}

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        OpParams.Rope p = node.params(OpParams.Rope.class);
        var s = node.shape();
        int bN = s.dim(0), hN = s.dim(1), lN = s.dim(2), dN = s.dim(3), rd = p.rotaryDim(), half = rd / 2;
        boolean ids = p.positions() == OpParams.Rope.Positions.IDS;
        int[] pos = positions(p, in, bN, lN);
        int max = 0;
        for (int q : pos) max = Math.max(max, q);
        Table t;
        int[] row; // the table row of each entry of pos
        if ((long) (max + 1) * half <= MAX_CACHED) {
            t = cached(p, max + 1);
            row = pos;
        } else {
            t = table(p, pos);
            row = new int[pos.length];
            for (int i = 0; i < row.length; i++) row[i] = i;
        }
        Table tab = t;
        int rows = bN * hN * lN;
        par.forRange(rows, Math.max(1, Elementwise.GRAIN / Math.max(1, dN)), (from, to) -> {
            for (int r = from; r < to; r++) {
                int l = r % lN, b = r / (hN * lN);
                int tr = row[ids ? b * lN + l : l] * half;
                rotate(out, in[0], r * dN, half, tab.cos(), tab.sin(), tr);
                if (rd < dN && out != in[0]) System.arraycopy(in[0], r * dN + rd, out, r * dN + rd, dN - rd);
            }
        });
    }

    private static void rotate(float[] out, float[] x, int o, int half, float[] cos, float[] sin, int tr) {
        int j = 0;
        for (int ub = SP.loopBound(half); j < ub; j += SP.length()) {
            FloatVector x1 = FloatVector.fromArray(SP, x, o + j), x2 = FloatVector.fromArray(SP, x, o + half + j);
            FloatVector c = FloatVector.fromArray(SP, cos, tr + j), sn = FloatVector.fromArray(SP, sin, tr + j);
            x1.mul(c).sub(x2.mul(sn)).intoArray(out, o + j);
            x2.mul(c).add(x1.mul(sn)).intoArray(out, o + half + j);
        }
        for (; j < half; j++) {
            float x1 = x[o + j], x2 = x[o + half + j], c = cos[tr + j], sn = sin[tr + j];
            out[o + j] = x1 * c - x2 * sn;
            out[o + half + j] = x2 * c + x1 * sn;
        }
    }

    /**
     * The positions: per l ({@code RANGE}, {@code START}) or per (b, l) ({@code IDS}), checked (integral, in [0,
     * {@link OpParams.Rope#MAX_POSITION}]).
     */
    static int[] positions(OpParams.Rope p, float[][] in, int bN, int lN) {
        int[] pos = new int[p.positions() == OpParams.Rope.Positions.IDS ? bN * lN : lN];
        for (int i = 0; i < pos.length; i++) {
            double v =
                    switch (p.positions()) {
                        case RANGE -> (double) p.offset() + i;
                        case START -> (double) p.offset() + in[1][0] + i;
                        case IDS -> (double) p.offset() + in[1][i];
                    };
            if (!(v >= 0 && v <= OpParams.Rope.MAX_POSITION) || v != Math.rint(v))
                throw AttnException.badInput("rope position "
                        + (p.positions() == OpParams.Rope.Positions.RANGE
                                ? ""
                                : p.positions() == OpParams.Rope.Positions.START ? "start + " : "id + ")
                        + "offset = " + v + " is not an integer in [0, " + OpParams.Rope.MAX_POSITION + "]");
            pos[i] = (int) v;
        }
        return pos;
    }

    /** The JVM's table for (theta, rotary dim, scaling) with at least {@code rows} positions. */
    private static Table cached(OpParams.Rope p, int rows) {
        Key key = new Key(p.theta(), p.rotaryDim(), p.scaling());
        Table t = TABLES.get(key);
        if (t != null && t.rows() >= rows) return t;
        int half = p.rotaryDim() / 2;
        int n = Math.max(256, Integer.highestOneBit(Math.max(1, rows - 1)) << 1);
        n = (int) Math.max(rows, Math.min(n, MAX_CACHED / half));
        int[] all = new int[n];
        for (int i = 0; i < n; i++) all[i] = i;
        Table fresh = table(p, all);
        if (TABLES.size() > 64) TABLES.clear(); // a JVM that sees many thetas: keep memory bounded
        return TABLES.merge(key, fresh, (old, neu) -> old.rows() >= neu.rows() ? old : neu);
    }

    /** cos and sin of the float32 angles of {@code pos}, one row each. */
    static Table table(OpParams.Rope p, int[] pos) {
        int half = p.rotaryDim() / 2;
        float[] inv = new float[half];
        for (int i = 0; i < half; i++) inv[i] = p.invFreq(i);
        float[] cos = new float[pos.length * half], sin = new float[pos.length * half];
        for (int r = 0; r < pos.length; r++)
            for (int i = 0; i < half; i++) {
                double a = OpParams.Rope.angle(pos[r], inv[i]);
                cos[r * half + i] = (float) Math.cos(a);
                sin[r * half + i] = (float) Math.sin(a);
            }
        return new Table(pos.length, half, cos, sin);
    }
}
