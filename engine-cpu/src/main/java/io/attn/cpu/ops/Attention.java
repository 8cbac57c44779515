package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Fused scaled dot-product attention, flash style: {@code out = softmax(scale Q K^T + masks) V} without ever holding
 * an {@code L x S} matrix.
 *
 * <p>A task is one (batch, head) and a block of up to {@link #BR} queries (halved down to {@link #BR_SMALL} until
 * there are enough tasks for the threads). It walks the keys in tiles of {@link #BC}: the key
 * tile is transposed into scratch, a {@code BR x BC} score tile is computed with a register-blocked kernel, masked
 * ({@link Masks}), and folded into per-row running max {@code m}, running sum {@code l} and an un-normalised output
 * accumulator (online softmax: when the max grows, the old sum and accumulator are rescaled by {@code exp(m_old -
 * m_new)}). Causal attention stops at the block's last query (key tiles wholly above the diagonal are skipped). A row
 * whose keys are all masked keeps {@code l = 0} and gets a zero output. Full, unmasked tiles take a fast path (4x4-vector
 * score and P.V kernels, a one-pass row step with a lazy running max); causal blocks skip the rows above each tile. Scratch is per thread: {@code O(BC D + BR BC +
 * BR Dv)} floats.
 */
public final class Attention {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final int VL = SP.length();
    /**
     * Query rows per task: large blocks amortise the key-tile transposition over more rows; small ones keep enough
     * tasks for every thread when there are few (batch, head) pairs.
     */
    static final int BR = 512, BR_SMALL = 32;

    /** Keys per tile: wider tiles mean fewer per-row max/sum reductions and accumulator rescales. */
    static final int BC = 128;
    /** Score-tile row stride: BC rounded up to two vectors (the score kernel's width). */
    private static final int BCP = (BC + 2 * VL - 1) / (2 * VL) * (2 * VL);

    private Attention() {}

    /** How far a score may exceed the running max before the fast path rescales (e^16 ~ 8.9e6). */
    private static final float LAZY = 16f;

    private static final float E_LAZY = (float) Math.exp(LAZY);

    private static final class Scratch {
        float[] kt = new float[0], s = new float[BR * BCP], acc = new float[0], qs = new float[0];
        final float[] m = new float[BR], l = new float[BR], corr = new float[BR];

        private final int[] index = new int[VL];
        private int indexD = -1;

        /** {@code {0, d, 2d, ...}}: the gather map down a column of a row-major {@code (., d)} matrix. */
        int[] gatherIndex(int d) {
            if (indexD != d) {
                for (int j = 0; j < VL; j++) index[j] = j * d;
                indexD = d;
            }
            return index;
        }

        void ensure(int d, int dv) {
            if (kt.length < d * BCP) kt = new float[d * BCP];
            if (acc.length < BR * dv) acc = new float[BR * dv];
            if (qs.length < BR * d) qs = new float[BR * d];
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        OpParams.Attention p = node.params(OpParams.Attention.class);
        Shape sq = node.input(0).shape(),
                sk = node.input(1).shape(),
                sv = node.input(2).shape();
        int b = sq.dim(0), h = sq.dim(1), l = sq.dim(2), d = sq.dim(3), s = sk.dim(2), dv = sv.dim(3);
        Masks masks = new Masks(p.mask(), node, in, 3, l, s);
        int rows = BR;
        while (rows > BR_SMALL && (long) b * h * ((l + rows - 1) / rows) < 4L * par.threads()) rows /= 2;
        int br = rows;
        int qBlocks = (l + br - 1) / br;
        float scale = p.scale();
        par.forEach(
                b * h * qBlocks,
                t -> block(
                        t / qBlocks, (t % qBlocks) * br, br, h, l, s, d, dv, scale, masks, in[0], in[1], in[2], out));
    }

    private static void block(
            int bh,
            int i0,
            int rows,
            int heads,
            int l,
            int s,
            int d,
            int dv,
            float scale,
            Masks masks,
            float[] q,
            float[] k,
            float[] v,
            float[] out) {
        Scratch sc = SCRATCH.get();
        sc.ensure(d, dv);
        int br = Math.min(rows, l - i0);
        int qo = (bh * l + i0) * d, ko = bh * s * d, vo = bh * s * dv;
        int b = bh / heads, h = bh % heads;
        float[] m = sc.m, sum = sc.l, corr = sc.corr, acc = sc.acc, st = sc.s, kt = sc.kt, qs = sc.qs;
        Arrays.fill(m, 0, br, Float.NEGATIVE_INFINITY);
        Arrays.fill(sum, 0, br, 0f);
        Arrays.fill(acc, 0, br * dv, 0f);
        // the query block, pre-scaled: scores come out scaled, and the masks see scale 1
        for (int e = 0; e < br * d; e++) qs[e] = q[qo + e] * scale;
        boolean causal = masks.causal();
        // fast path: no mask inputs and a key tile of whole 4-vector chunks (the 4x4 score kernel's width)
        boolean fast = masks.noMaskInputs() && BCP == BC && BC % (4 * VL) == 0;
        int jEnd = causal ? Math.min(s, i0 + br) : s;
        for (int j0 = 0; j0 < jEnd; j0 += BC) {
            int bc = Math.min(BC, jEnd - j0);
            // transpose the key tile: kt[dd * BCP + c] = k[j0 + c, dd], zero columns past bc
            if (bc == BCP) transposeTile(k, ko + j0 * d, d, kt, sc.gatherIndex(d));
            else
                for (int c = 0; c < BCP; c++) {
                    if (c < bc) {
                        int src = ko + (j0 + c) * d;
                        for (int dd = 0; dd < d; dd++) kt[dd * BCP + c] = k[src + dd];
                    } else for (int dd = 0; dd < d; dd++) kt[dd * BCP + c] = 0f;
                }
            int fastFrom = br, fastTo = br;
            if (fast && bc == BC) {
                // causal: rows from i0 + fastFrom on see every key of the tile; the rows above go the general way
                fastFrom = causal ? Math.min(br, (Math.max(0, j0 + BC - 1 - i0) + 3) / 4 * 4) : 0;
                fastTo = fastFrom + (br - fastFrom) / 4 * 4;
                fastRows(fastFrom, fastTo, qs, d, kt, st, m, sum, corr);
            }
            // causal: rows above the tile's first key (i0 + r < j0) see none of it and are skipped, from a multiple of
            // 4
            int first = causal ? Math.min(br, Math.max(0, j0 - i0)) / 4 * 4 : 0;
            if (fastFrom > first) general(first, fastFrom, qs, d, bc, kt, st, masks, b, h, i0, j0, m, sum, corr);
            if (fastTo < br) general(fastTo, br, qs, d, bc, kt, st, masks, b, h, i0, j0, m, sum, corr);
            accumulate(st, corr, first, bc, br, v, vo + j0 * dv, dv, acc);
        }
        int oo = (bh * l + i0) * dv;
        for (int r = 0; r < br; r++) {
            if (sum[r] == 0f) Arrays.fill(out, oo + r * dv, oo + (r + 1) * dv, 0f);
            else {
                float inv = 1f / sum[r];
                for (int c = 0; c < dv; c++) out[oo + r * dv + c] = acc[r * dv + c] * inv;
            }
        }
    }

    /** A full key tile transposed with vector gathers: {@code kt[dd * BCP + c] = k[src + c*d + dd]}. */
    private static void transposeTile(float[] k, int src, int d, float[] kt, int[] idx) {
        for (int c = 0; c < BCP; c += VL) {
            int from = src + c * d;
            for (int dd = 0; dd < d; dd++)
                FloatVector.fromArray(SP, k, from + dd, idx, 0).intoArray(kt, dd * BCP + c);
        }
    }

    /** {@code st[r * BCP + c] = q[qo + r*d, :] . kt[:, c]} for {@code r0 <= r < br}, every {@code c < BCP}. */
    private static void scores(float[] q, int qo, int d, int r0, int br, float[] kt, float[] st) {
        int r = r0;
        for (; r + 4 <= br; r += 4) {
            int q0 = qo + r * d;
            for (int cv = 0; cv < BCP; cv += 2 * VL) {
                FloatVector a00 = FloatVector.zero(SP), a01 = a00, a10 = a00, a11 = a00;
                FloatVector a20 = a00, a21 = a00, a30 = a00, a31 = a00;
                for (int dd = 0; dd < d; dd++) {
                    FloatVector k0 = FloatVector.fromArray(SP, kt, dd * BCP + cv);
                    FloatVector k1 = FloatVector.fromArray(SP, kt, dd * BCP + cv + VL);
                    FloatVector x = FloatVector.broadcast(SP, q[q0 + dd]);
                    a00 = x.fma(k0, a00);
                    a01 = x.fma(k1, a01);
                    x = FloatVector.broadcast(SP, q[q0 + d + dd]);
                    a10 = x.fma(k0, a10);
                    a11 = x.fma(k1, a11);
                    x = FloatVector.broadcast(SP, q[q0 + 2 * d + dd]);
                    a20 = x.fma(k0, a20);
                    a21 = x.fma(k1, a21);
                    x = FloatVector.broadcast(SP, q[q0 + 3 * d + dd]);
                    a30 = x.fma(k0, a30);
                    a31 = x.fma(k1, a31);
                }
                int so = r * BCP + cv;
                a00.intoArray(st, so);
                a01.intoArray(st, so + VL);
                a10.intoArray(st, so + BCP);
                a11.intoArray(st, so + BCP + VL);
                a20.intoArray(st, so + 2 * BCP);
                a21.intoArray(st, so + 2 * BCP + VL);
                a30.intoArray(st, so + 3 * BCP);
                a31.intoArray(st, so + 3 * BCP + VL);
            }
        }
        for (; r < br; r++) {
            int q0 = qo + r * d;
            for (int cv = 0; cv < BCP; cv += VL) {
                FloatVector a = FloatVector.zero(SP);
                for (int dd = 0; dd < d; dd++)
                    a = FloatVector.broadcast(SP, q[q0 + dd]).fma(FloatVector.fromArray(SP, kt, dd * BCP + cv), a);
                a.intoArray(st, r * BCP + cv);
            }
        }
    }

    /**
     * Four rows of scores against {@code 4 * VL} keys (columns {@code c0..} of the tile), 16 accumulators: {@code
     * st[so + r * BCP + c] = q[qo + r*d, :] . kt[:, c0 + c]}.
     */
    private static void scores4x4(float[] q, int qo, int d, float[] kt, int c0, float[] st, int so) {
        FloatVector a00 = FloatVector.zero(SP), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int dd = 0; dd < d; dd++) {
            int ko = dd * BCP + c0;
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            FloatVector k1 = FloatVector.fromArray(SP, kt, ko + VL);
            FloatVector k2 = FloatVector.fromArray(SP, kt, ko + 2 * VL);
            FloatVector k3 = FloatVector.fromArray(SP, kt, ko + 3 * VL);
            FloatVector x = FloatVector.broadcast(SP, q[qo + dd]);
            a00 = x.fma(k0, a00);
            a01 = x.fma(k1, a01);
            a02 = x.fma(k2, a02);
            a03 = x.fma(k3, a03);
            x = FloatVector.broadcast(SP, q[qo + d + dd]);
            a10 = x.fma(k0, a10);
            a11 = x.fma(k1, a11);
            a12 = x.fma(k2, a12);
            a13 = x.fma(k3, a13);
            x = FloatVector.broadcast(SP, q[qo + 2 * d + dd]);
            a20 = x.fma(k0, a20);
            a21 = x.fma(k1, a21);
            a22 = x.fma(k2, a22);
            a23 = x.fma(k3, a23);
            x = FloatVector.broadcast(SP, q[qo + 3 * d + dd]);
            a30 = x.fma(k0, a30);
            a31 = x.fma(k1, a31);
            a32 = x.fma(k2, a32);
            a33 = x.fma(k3, a33);
        }
        a00.intoArray(st, so);
        a01.intoArray(st, so + VL);
        a02.intoArray(st, so + 2 * VL);
        a03.intoArray(st, so + 3 * VL);
        a10.intoArray(st, so + BCP);
        a11.intoArray(st, so + BCP + VL);
        a12.intoArray(st, so + BCP + 2 * VL);
        a13.intoArray(st, so + BCP + 3 * VL);
        a20.intoArray(st, so + 2 * BCP);
        a21.intoArray(st, so + 2 * BCP + VL);
        a22.intoArray(st, so + 2 * BCP + 2 * VL);
        a23.intoArray(st, so + 2 * BCP + 3 * VL);
        a30.intoArray(st, so + 3 * BCP);
        a31.intoArray(st, so + 3 * BCP + VL);
        a32.intoArray(st, so + 3 * BCP + 2 * VL);
        a33.intoArray(st, so + 3 * BCP + 3 * VL);
    }

    /** The fast path for rows {@code [r0, r1)} (a multiple of 4 rows) that see every key of a full, unmasked tile. */
    private static void fastRows(
            int r0, int r1, float[] qs, int d, float[] kt, float[] st, float[] m, float[] sum, float[] corr) {
        for (int r = r0; r < r1; r += 4) {
            for (int c0 = 0; c0 < BC; c0 += 4 * VL) scores4x4(qs, r * d, d, kt, c0, st, r * BCP + c0);
            for (int rr = r; rr < r + 4; rr++) softmaxRow(st, rr * BCP, rr, m, sum, corr);
        }
    }

    /** Scores, masks and the online-softmax step for rows {@code [r0, r1)} of the block, any mask. */
    private static void general(
            int r0,
            int r1,
            float[] qs,
            int d,
            int bc,
            float[] kt,
            float[] st,
            Masks masks,
            int b,
            int h,
            int i0,
            int j0,
            float[] m,
            float[] sum,
            float[] corr) {
        scores(qs, 0, d, r0, r1, kt, st);
        for (int r = r0; r < r1; r++) {
            int so = r * BCP;
            masks.apply(st, so, bc, b, h, i0 + r, j0, 1f);
            float mt = Softmax.max(st, so, bc);
            float mNew = Math.max(m[r], mt);
            if (mNew == Float.NEGATIVE_INFINITY) { // every key so far masked: this tile adds nothing
                Arrays.fill(st, so, so + bc, 0f);
                corr[r] = 1f;
                continue;
            }
            float cr = mNew == m[r] ? 1f : (float) Math.exp(m[r] - mNew); // 0 when m was -inf
            float rowSum = Softmax.expSub(st, so, bc, mNew);
            sum[r] = sum[r] * cr + rowSum;
            m[r] = mNew;
            corr[r] = cr;
        }
    }

    /**
     * The online-softmax step for one unmasked row of {@code 4 * VL} scaled scores at {@code st[so..]}, in one pass
     * over four registers: clamp to finite (as {@link Masks#apply} does), tile max, {@code p = exp(s - m_new)} stored
     * back, and the running max, sum and rescale factor of row {@code r} updated.
     */
    private static void softmaxRow(float[] st, int so, int r, float[] m, float[] sum, float[] corr) {
        float mOld = m[r];
        if (mOld != Float.NEGATIVE_INFINITY) {
            // lazy max: while no score exceeds the running max by more than LAZY, keep the running max (softmax does
            // not depend on the offset; p <= e^LAZY cannot overflow a float sum). This needs only a vector compare,
            // not a horizontal max, no rescale factor and no exp of it. NaN fails the compare and flows into the
            // output as it would on the general path; -inf gives p = 0 on both paths; +inf goes the slow way.
            FloatVector mx = FloatVector.fromArray(SP, st, so);
            for (int c = VL; c < BC; c += VL) mx = mx.max(FloatVector.fromArray(SP, st, so + c));
            if (!mx.compare(VectorOperators.GT, mOld + LAZY).anyTrue()) {
                FloatVector acc = FloatVector.zero(SP);
                for (int c = 0; c < BC; c += VL) {
                    FloatVector e = VExp.expNonPositive(
                                    FloatVector.fromArray(SP, st, so + c).sub(mOld + LAZY))
                            .mul(E_LAZY);
                    e.intoArray(st, so + c);
                    acc = acc.add(e);
                }
                sum[r] += Lanes.sum(acc); // fixed order: bitwise-reproducible across JIT tiers
                corr[r] = 1f;
                return;
            }
        }
        final float big = Float.MAX_VALUE;
        // one call site for VExp (so C2 inlines it: vectors passed to a call that is not inlined would be boxed)
        FloatVector mx = FloatVector.broadcast(SP, Float.NEGATIVE_INFINITY);
        for (int c = 0; c < BC; c += VL) {
            FloatVector x = FloatVector.fromArray(SP, st, so + c).max(-big).min(big);
            x.intoArray(st, so + c);
            mx = mx.max(x);
        }
        float mNew = Math.max(mOld, mx.reduceLanes(VectorOperators.MAX));
        float cr = mNew == mOld ? 1f : (float) Math.exp(mOld - mNew); // 0 when m was -inf
        FloatVector acc = FloatVector.zero(SP);
        for (int c = 0; c < BC; c += VL) {
            FloatVector e =
                    VExp.expNonPositive(FloatVector.fromArray(SP, st, so + c).sub(mNew));
            e.intoArray(st, so + c);
            acc = acc.add(e);
        }
        sum[r] = sum[r] * cr + Lanes.sum(acc);
        m[r] = mNew;
        corr[r] = cr;
    }

    /**
     * {@code acc[r, :] = corr[r] acc[r, :] + sum_c p[r, c] v[c, :]} for {@code r0 <= r < br} ({@code r0} a multiple of 4), {@code c < bc}; v rows start
     * at {@code vo}. The online-softmax rescale rides along with the load of the accumulator.
     */
    private static void accumulate(
            float[] p, float[] corr, int r0, int bc, int br, float[] v, int vo, int dv, float[] acc) {
        int ub = SP.loopBound(dv);
        int r = r0;
        int ub2 = dv / (2 * VL) * (2 * VL);
        int ub4 = dv / (4 * VL) * (4 * VL);
        for (; r + 4 <= br; r += 4) {
            int p0 = r * BCP, a0 = r * dv;
            for (int cv = 0; cv < ub4; cv += 4 * VL) accumulate4x4(p, p0, corr, r, bc, v, vo + cv, dv, acc, a0 + cv);
            for (int cv = ub4; cv < ub2; cv += 2 * VL) { // 4 rows x 2 vectors: 8 accumulators
                int a1 = a0 + dv, a2 = a0 + 2 * dv, a3 = a0 + 3 * dv;
                FloatVector x0 = FloatVector.fromArray(SP, acc, a0 + cv).mul(corr[r]);
                FloatVector y0 = FloatVector.fromArray(SP, acc, a0 + cv + VL).mul(corr[r]);
                FloatVector x1 = FloatVector.fromArray(SP, acc, a1 + cv).mul(corr[r + 1]);
                FloatVector y1 = FloatVector.fromArray(SP, acc, a1 + cv + VL).mul(corr[r + 1]);
                FloatVector x2 = FloatVector.fromArray(SP, acc, a2 + cv).mul(corr[r + 2]);
                FloatVector y2 = FloatVector.fromArray(SP, acc, a2 + cv + VL).mul(corr[r + 2]);
                FloatVector x3 = FloatVector.fromArray(SP, acc, a3 + cv).mul(corr[r + 3]);
                FloatVector y3 = FloatVector.fromArray(SP, acc, a3 + cv + VL).mul(corr[r + 3]);
                for (int c = 0; c < bc; c++) {
                    FloatVector v0 = FloatVector.fromArray(SP, v, vo + c * dv + cv);
                    FloatVector v1 = FloatVector.fromArray(SP, v, vo + c * dv + cv + VL);
                    FloatVector w = FloatVector.broadcast(SP, p[p0 + c]);
                    x0 = w.fma(v0, x0);
                    y0 = w.fma(v1, y0);
                    w = FloatVector.broadcast(SP, p[p0 + BCP + c]);
                    x1 = w.fma(v0, x1);
                    y1 = w.fma(v1, y1);
                    w = FloatVector.broadcast(SP, p[p0 + 2 * BCP + c]);
                    x2 = w.fma(v0, x2);
                    y2 = w.fma(v1, y2);
                    w = FloatVector.broadcast(SP, p[p0 + 3 * BCP + c]);
                    x3 = w.fma(v0, x3);
                    y3 = w.fma(v1, y3);
                }
                x0.intoArray(acc, a0 + cv);
                y0.intoArray(acc, a0 + cv + VL);
                x1.intoArray(acc, a1 + cv);
                y1.intoArray(acc, a1 + cv + VL);
                x2.intoArray(acc, a2 + cv);
                y2.intoArray(acc, a2 + cv + VL);
                x3.intoArray(acc, a3 + cv);
                y3.intoArray(acc, a3 + cv + VL);
            }
            for (int cv = ub2; cv < ub; cv += VL) {
                FloatVector x0 = FloatVector.fromArray(SP, acc, a0 + cv).mul(corr[r]);
                FloatVector x1 = FloatVector.fromArray(SP, acc, a0 + dv + cv).mul(corr[r + 1]);
                FloatVector x2 =
                        FloatVector.fromArray(SP, acc, a0 + 2 * dv + cv).mul(corr[r + 2]);
                FloatVector x3 =
                        FloatVector.fromArray(SP, acc, a0 + 3 * dv + cv).mul(corr[r + 3]);
                for (int c = 0; c < bc; c++) {
                    FloatVector vv = FloatVector.fromArray(SP, v, vo + c * dv + cv);
                    x0 = FloatVector.broadcast(SP, p[p0 + c]).fma(vv, x0);
                    x1 = FloatVector.broadcast(SP, p[p0 + BCP + c]).fma(vv, x1);
                    x2 = FloatVector.broadcast(SP, p[p0 + 2 * BCP + c]).fma(vv, x2);
                    x3 = FloatVector.broadcast(SP, p[p0 + 3 * BCP + c]).fma(vv, x3);
                }
                x0.intoArray(acc, a0 + cv);
                x1.intoArray(acc, a0 + dv + cv);
                x2.intoArray(acc, a0 + 2 * dv + cv);
                x3.intoArray(acc, a0 + 3 * dv + cv);
            }
            for (int rr = r; rr < r + 4; rr++) tail(p, rr * BCP, corr[rr], bc, v, vo, dv, ub, acc, rr * dv);
        }
        for (; r < br; r++) {
            int p0 = r * BCP, a0 = r * dv;
            for (int cv = 0; cv < ub; cv += VL) {
                FloatVector x0 = FloatVector.fromArray(SP, acc, a0 + cv).mul(corr[r]);
                for (int c = 0; c < bc; c++)
                    x0 = FloatVector.broadcast(SP, p[p0 + c]).fma(FloatVector.fromArray(SP, v, vo + c * dv + cv), x0);
                x0.intoArray(acc, a0 + cv);
            }
            tail(p, p0, corr[r], bc, v, vo, dv, ub, acc, a0);
        }
    }

    /**
     * {@link #accumulate} for rows {@code r..r+3} and four vectors of columns (16 accumulators): {@code acc[a0 + i*dv
     * ..] = corr[r+i] acc[..] + sum_c p[p0 + i*BCP + c] v[vo + c*dv ..]}.
     */
    private static void accumulate4x4(
            float[] p, int p0, float[] corr, int r, int bc, float[] v, int vo, int dv, float[] acc, int a0) {
        int a1 = a0 + dv, a2 = a1 + dv, a3 = a2 + dv;
        float c0 = corr[r], c1 = corr[r + 1], c2 = corr[r + 2], c3 = corr[r + 3];
        FloatVector x00 = FloatVector.fromArray(SP, acc, a0).mul(c0);
        FloatVector x01 = FloatVector.fromArray(SP, acc, a0 + VL).mul(c0);
        FloatVector x02 = FloatVector.fromArray(SP, acc, a0 + 2 * VL).mul(c0);
        FloatVector x03 = FloatVector.fromArray(SP, acc, a0 + 3 * VL).mul(c0);
        FloatVector x10 = FloatVector.fromArray(SP, acc, a1).mul(c1);
        FloatVector x11 = FloatVector.fromArray(SP, acc, a1 + VL).mul(c1);
        FloatVector x12 = FloatVector.fromArray(SP, acc, a1 + 2 * VL).mul(c1);
        FloatVector x13 = FloatVector.fromArray(SP, acc, a1 + 3 * VL).mul(c1);
        FloatVector x20 = FloatVector.fromArray(SP, acc, a2).mul(c2);
        FloatVector x21 = FloatVector.fromArray(SP, acc, a2 + VL).mul(c2);
        FloatVector x22 = FloatVector.fromArray(SP, acc, a2 + 2 * VL).mul(c2);
        FloatVector x23 = FloatVector.fromArray(SP, acc, a2 + 3 * VL).mul(c2);
        FloatVector x30 = FloatVector.fromArray(SP, acc, a3).mul(c3);
        FloatVector x31 = FloatVector.fromArray(SP, acc, a3 + VL).mul(c3);
        FloatVector x32 = FloatVector.fromArray(SP, acc, a3 + 2 * VL).mul(c3);
        FloatVector x33 = FloatVector.fromArray(SP, acc, a3 + 3 * VL).mul(c3);
        for (int c = 0; c < bc; c++) {
            int vc = vo + c * dv;
            FloatVector v0 = FloatVector.fromArray(SP, v, vc);
            FloatVector v1 = FloatVector.fromArray(SP, v, vc + VL);
            FloatVector v2 = FloatVector.fromArray(SP, v, vc + 2 * VL);
            FloatVector v3 = FloatVector.fromArray(SP, v, vc + 3 * VL);
            FloatVector w = FloatVector.broadcast(SP, p[p0 + c]);
            x00 = w.fma(v0, x00);
            x01 = w.fma(v1, x01);
            x02 = w.fma(v2, x02);
            x03 = w.fma(v3, x03);
            w = FloatVector.broadcast(SP, p[p0 + BCP + c]);
            x10 = w.fma(v0, x10);
            x11 = w.fma(v1, x11);
            x12 = w.fma(v2, x12);
            x13 = w.fma(v3, x13);
            w = FloatVector.broadcast(SP, p[p0 + 2 * BCP + c]);
            x20 = w.fma(v0, x20);
            x21 = w.fma(v1, x21);
            x22 = w.fma(v2, x22);
            x23 = w.fma(v3, x23);
            w = FloatVector.broadcast(SP, p[p0 + 3 * BCP + c]);
            x30 = w.fma(v0, x30);
            x31 = w.fma(v1, x31);
            x32 = w.fma(v2, x32);
            x33 = w.fma(v3, x33);
        }
        x00.intoArray(acc, a0);
        x01.intoArray(acc, a0 + VL);
        x02.intoArray(acc, a0 + 2 * VL);
        x03.intoArray(acc, a0 + 3 * VL);
        x10.intoArray(acc, a1);
        x11.intoArray(acc, a1 + VL);
        x12.intoArray(acc, a1 + 2 * VL);
        x13.intoArray(acc, a1 + 3 * VL);
        x20.intoArray(acc, a2);
        x21.intoArray(acc, a2 + VL);
        x22.intoArray(acc, a2 + 2 * VL);
        x23.intoArray(acc, a2 + 3 * VL);
        x30.intoArray(acc, a3);
        x31.intoArray(acc, a3 + VL);
        x32.intoArray(acc, a3 + 2 * VL);
        x33.intoArray(acc, a3 + 3 * VL);
    }

    /** Scalar part of {@link #accumulate} for columns {@code [from, dv)} of one row. */
    private static void tail(
            float[] p, int p0, float corr, int bc, float[] v, int vo, int dv, int from, float[] acc, int a0) {
        for (int cc = from; cc < dv; cc++) {
            float x = acc[a0 + cc] * corr;
            for (int c = 0; c < bc; c++) x = Math.fma(p[p0 + c], v[vo + c * dv + cc], x);
            acc[a0 + cc] = x;
        }
    }
}
