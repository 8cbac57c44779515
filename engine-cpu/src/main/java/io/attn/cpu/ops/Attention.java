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
 * <p>A task is one (batch, head) and a block of up to {@link #BR} queries (halved down to {@link #BR_SMALL} until there
 * are enough tasks for the threads). It walks the keys in tiles of {@link #BC} keys (causal attention: {@link
 * Tuning#causalKeyTile}): the key tile is transposed into scratch (scaled by {@code scale * log2(e)}, so scores come
 * out in base-2 units and {@code p = 2^(s - m)}), then each group of {@link #GR} query rows runs scores, the
 * online-softmax step and {@code P.V} back to back while its scores sit in L1. The running state per row is a max
 * {@code m}, a sum and an un-normalised output accumulator; when the max grows, sum and accumulator are rescaled by
 * {@code 2^(m_old - m_new)}.
 *
 * <p>Full, unmasked tiles take a fast path: a 6 x 4-vector score kernel that tests, in registers, whether any score
 * exceeds its row's running max by more than {@link #LAZY}; if none does (nearly always after the first tile), the max
 * is kept as it is (softmax does not depend on the offset), so there is no horizontal max, no rescale and one vector
 * exponential per 16 scores, summed into per-row vector sums reduced once per block, and a 6 x 4-vector {@code P.V}
 * kernel. A sequence shorter than one tile (unmasked, not causal: a sentence) takes the same kernels on its keys
 * rounded up to {@link #SHORT_KEYS}, the padded scores set to -inf, at any head size ({@code P.V} on the 6 x 4 kernel
 * where the value head is whole 4-vector chunks, else on 4-row tiles). A relative position bias alone (all finite,
 * {@link io.attn.graph.MaskKind#RELATIVE}) keeps these kernels: each row's run of biases is added to its scores and the
 * rows take the exact online-softmax step (the lazy test saw the scores before the bias). Masked tiles, causal
 * diagonal tiles and ragged edges take the general path ({@link Masks}, exact running max). Causal attention stops at
 * the block's last query and skips rows above each tile. A sliding window ({@link io.attn.graph.MaskSpec#windowed}) walks
 * only the key tiles between the block's first row's window start and its last row's window end, and in each tile only
 * the groups of rows whose windows reach it, so work is {@code O(L x (window + tile))}; groups whose every row has the
 * whole tile in its window keep the fast path. Keys past the last one that a key-padding mask leaves visible to a
 * batch item (a decoding step's cache rows not yet written) are never read. A query of one row (a decoding step)
 * computes its scores as dot products on the keys in place, without the transposed tile. A row whose keys are
 * all masked gets zeros. Scratch is per thread:
 * {@code O(BC D + BR (Dv + VL))} floats.
 *
 * <p>Grouped-query attention (K/V with {@code Hkv} heads, {@code H % Hkv == 0}): a query head's tasks read the keys
 * and values of head {@code h / (H / Hkv)} of the same batch item in place, so K/V are never copied.
 *
 * <p>Every row's result depends only on its own index and the tile grid, never on the block size or the thread count,
 * so outputs are bitwise identical for any number of threads.
 */
public final class Attention {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final int VL = SP.length();
    /**
     * Query rows per group: the fast path's score and {@code P.V} kernels hold a 6 x 4-vector tile of accumulators
     * (24 of the 32 AVX-512 registers; measured on Zen 5 on cached data: scores 5% and {@code P.V} 10% faster than with
     * 4 rows, about 2% for the whole op). With AVX2's 16 registers ({@link Registers#FEW}) that tile spills, and the
     * kernels run the group as three 2 x 4-vector tiles instead (8 accumulators, 14 registers with the loads).
     */
    static final int GR = 6;

    /**
     * Query rows per task: large blocks amortise the key-tile transposition over more rows; small ones keep enough
     * tasks for every thread when there are few (batch, head) pairs. Every size is a multiple of {@link #GR}, so a
     * row's group, and so its path, does not depend on the block size.
     */
    static final int BR = 768, BR_SMALL = 24;

    /**
     * The fewest rows for which a short last group runs the fast kernels padded to {@link #GR} rows. Measured on Zen 5
     * (B=1 H=8 S=1024 D=64, 1 thread): one query row (a decoding step) 0.12 ms on the general path vs 0.15 padded; two
     * rows 0.19 vs 0.145; L=512 (two rows left over per head) 3.5% faster padded.
     */
    static final int PAD_MIN = 2;

    /**
     * The fewest query rows for which a block first reads its keys in one sequential pass ({@link #touch}): with few
     * rows the key tiles' transposition is most of the work, and the extra pass only adds to it.
     */
    static final int TOUCH_ROWS = 96;

    /**
     * Keys per tile: a transposed key tile and a value tile ({@code 2 x BC x 64} floats at head size 64) stay in L1
     * together with a group's scores (measured on Zen 5: 64 beats 128 by 10%, 256 by 20%). Causal attention may take
     * narrower tiles ({@link Tuning#causalKeyTile}, measured per CPU by {@code attn tune}): its diagonal tiles run the
     * masked path on their rows, so a narrower tile can pay there (Zen 3: 32 keys 8-16% faster). A narrower tile keeps
     * the score and key rows' stride {@link #BCP}, a constant of the kernels: a per-call stride cost them 14-18%
     * (docs/performance.md, "Attention's block sizes").
     */
    static final int BC = 64;

    /**
     * A sequence shorter than one tile runs the fast kernels on its keys rounded up to this: two vectors with 32
     * registers (the last chunk on {@link #fastScores6x2}; 32 keys at 512 bits, where four vectors would be 64 keys,
     * four times the 16 of a short sentence), four with 16 (the 2-row kernels' width).
     */
    private static final int SHORT_KEYS = Registers.FEW ? 4 * VL : 2 * VL;

    /** Score-tile row stride: BC rounded up to two vectors (the score kernel's width). */
    private static final int BCP = (BC + 2 * VL - 1) / (2 * VL) * (2 * VL);

    /**
     * Whether {@code keys} can be a key tile's width: whole chunks of the score kernel's four vectors (32 keys with
     * 256-bit vectors, 64 with 512-bit ones), at most {@link #BC}.
     */
    static boolean validKeyTile(int keys) {
        return keys >= 4 * VL && keys <= BC && keys % (4 * VL) == 0 && BCP == BC;
    }

    /** The key tile widths this JVM's vectors allow, narrowest first (just {@link #BC} with 512-bit vectors). */
    static int[] keyTiles() {
        return java.util.stream.IntStream.rangeClosed(1, BC / (4 * VL))
                .map(i -> i * 4 * VL)
                .filter(Attention::validKeyTile)
                .toArray();
    }

    private Attention() {}

    /** How far (in base-2 units) a score may exceed the running max before the fast path rescales (2^16). */
    private static final float LAZY = 16f;

    private static final float LOG2E = 1.44269504088896341f;

    private static final class Scratch {
        // the transposed key tile; the block's output accumulators; the last group of a length that is not a
        // multiple of GR, padded with zero query rows (GR rows of d)
        float[] kt = new float[0], acc = new float[0], qpad = new float[0];
        /** One group's scores, then probabilities: GR rows of BCP. */
        final float[] s = new float[GR * BCP];

        // per-row state, with room for a padded last group
        final float[] m = new float[BR + GR], l = new float[BR + GR], corr = new float[BR + GR];
        final float[] sumv = new float[(BR + GR) * VL];
        /** One row's lane sums on their way to {@link Lanes#sum(float[], int)}. */
        final float[] lane = new float[VL];

        void ensure(int d, int dv) {
            if (kt.length < d * BCP) kt = new float[d * BCP];
            if (acc.length < (BR + GR) * dv) acc = new float[(BR + GR) * dv];
            if (qpad.length < GR * d) qpad = new float[GR * d];
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    public static void run(Parallel par, Node node, float[] out, float[][] in) {
        run(par, node, out, in, Tuning.causalKeyTile());
    }

    /** {@link #run} with causal attention in key tiles of {@code causalTile} keys ({@link #validKeyTile}). */
    static void run(Parallel par, Node node, float[] out, float[][] in, int causalTile) {
        if (!validKeyTile(causalTile))
            throw new IllegalArgumentException(
                    "key tile of " + causalTile + " keys: expected a multiple of " + 4 * VL + " up to " + BC);
        OpParams.Attention p = node.params(OpParams.Attention.class);
        Shape sq = node.input(0).shape(),
                sk = node.input(1).shape(),
                sv = node.input(2).shape();
        int b = sq.dim(0), h = sq.dim(1), l = sq.dim(2), d = sq.dim(3), s = sk.dim(2), dv = sv.dim(3);
        float scale = p.scale();
        // grouped-query attention: query head hh reads K/V head hh / group of its batch item (group 1: plain)
        int hkv = sk.dim(1), group = h / hkv;
        if (p.mask().segmented()) {
            segmented(par, node, p, b * h, h, hkv, l, d, dv, in, out, causalTile);
            return;
        }
        Masks masks = new Masks(p.mask(), node, in, 3, l, s);
        int rows = BR;
        while (rows > BR_SMALL && (long) b * h * ((l + rows - 1) / rows) < 4L * par.threads()) rows /= 2;
        int br = rows;
        int qBlocks = (l + br - 1) / br;
        par.forEach(b * h * qBlocks, t -> {
            int bh = t / qBlocks;
            int kvh = bh / h * hkv + bh % h / group;
            block(
                    bh,
                    (t % qBlocks) * br,
                    br,
                    h,
                    l,
                    s,
                    d,
                    dv,
                    scale,
                    masks,
                    in[0],
                    in[1],
                    in[2],
                    out,
                    bh * l,
                    kvh * s,
                    causalTile);
        });
    }

    /**
     * A ragged batch: each (batch, head) plane of {@code t} rows holds sequences one after another, each attending to
     * itself. Every sequence runs as its own problem (the blocks and key tiles start at its first row), so its rows get
     * exactly what the sequence alone gets, on the fast path (no mask inputs, or a relative bias alone: a sequence's
     * offsets {@code j - i} are the whole plane's, so the bias is indexed as for a plane of {@code t} rows).
     */
    private static void segmented(
            Parallel par,
            Node node,
            OpParams.Attention p,
            int planes,
            int heads,
            int kvHeads,
            int t,
            int d,
            int dv,
            float[][] in,
            float[] out,
            int causalTile) {
        int[] len = p.mask().segmentLengths();
        int[] start = new int[len.length];
        for (int g = 1; g < len.length; g++) start[g] = start[g - 1] + len[g - 1];
        // the causal rule, and a relative bias if any (its offsets within a sequence are those of the whole plane)
        Masks masks = new Masks(p.mask(), node, in, 3, t, t);
        int rows = BR;
        while (rows > BR_SMALL && (long) planes * blocks(len, rows) < 4L * par.threads()) rows /= 2;
        int br = rows;
        int perPlane = blocks(len, br);
        int[] seq = new int[perPlane], from = new int[perPlane];
        for (int g = 0, i = 0; g < len.length; g++)
            for (int i0 = 0; i0 < len[g]; i0 += br, i++) {
                seq[i] = g;
                from[i] = i0;
            }
        par.forEach(planes * perPlane, task -> {
            int bh = task / perPlane, i = task % perPlane, g = seq[i];
            int base = bh * t + start[g];
            int kvBase = (bh / heads * kvHeads + bh % heads / (heads / kvHeads)) * t + start[g];
            // the batch and head indices only address mask inputs: a ragged batch's relative bias is per head
            block(
                    bh,
                    from[i],
                    br,
                    heads,
                    len[g],
                    len[g],
                    d,
                    dv,
                    p.scale(),
                    masks,
                    in[0],
                    in[1],
                    in[2],
                    out,
                    base,
                    kvBase,
                    causalTile);
        });
    }

    /** The query blocks of {@code rows} rows over all sequences. */
    private static int blocks(int[] len, int rows) {
        int n = 0;
        for (int l : len) n += (l + rows - 1) / rows;
        return n;
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
            float[] out,
            int qBase,
            int kBase,
            int causalTile) {
        Scratch sc = SCRATCH.get();
        sc.ensure(d, dv);
        int br = Math.min(rows, l - i0);
        int qo = (qBase + i0) * d, ko = kBase * d, vo = kBase * dv;
        int b = bh / heads, h = bh % heads;
        float[] m = sc.m, sum = sc.l, corr = sc.corr, acc = sc.acc, st = sc.s, kt = sc.kt;
        // a last group short of GR rows (only at the end of the sequence, as block sizes are multiples of GR) runs
        // the fast kernels padded with zero query rows, whose results are dropped, when it has at least PAD_MIN rows;
        // a single row (a decoding step) takes the general path
        int rows6 = (br + GR - 1) / GR * GR, padFrom = br / GR * GR;
        boolean padFast = br - padFrom >= PAD_MIN;
        if (rows6 != br && padFast) {
            Arrays.fill(sc.qpad, 0, GR * d, 0f);
            System.arraycopy(q, qo + padFrom * d, sc.qpad, 0, (br - padFrom) * d);
        }
        Arrays.fill(m, 0, rows6, Float.NEGATIVE_INFINITY);
        Arrays.fill(sum, 0, rows6, 0f);
        float[] sumv = sc.sumv, lane = sc.lane;
        Arrays.fill(sumv, 0, rows6 * VL, 0f);
        // the key tiles are scaled by scale * log2(e): scores come out in base-2 units, p = 2^(s - m)
        float qscale = scale * LOG2E;
        // a window that holds every key of every row (a sentence shorter than a local layer's window) is no window:
        // the unwindowed kernels, fast path and short-sequence path included (it depends on l and s alone)
        boolean causal = masks.causal(), windowed = masks.windowed() && (masks.left() < l - 1 || masks.right() < s - 1);
        // keys per tile: BC, or causal attention's own width (at most BC; rows keep the stride BCP)
        int tb = causal ? causalTile : BC;
        // fast path: no mask inputs (or a relative bias alone) and a key tile of whole 4-vector chunks (the score
        // kernel's width)
        boolean relative = masks.relativeOnly();
        boolean fast = (masks.noMaskInputs() || relative) && BCP == BC && BC % (4 * VL) == 0;
        // a tile of fewer than tb keys, unmasked and not causal: a sequence shorter than one tile (a sentence, alone or
        // in a ragged batch), or the last tile of a longer one whose length is not a multiple of tb (a 66-token
        // sentence: 64 keys, then 2). The fast kernels on its keys rounded up to SHORT_KEYS (w), the padded columns'
        // scores set to -inf, P.V over its keys only, at any head size (before: the last tile of a longer sequence took
        // the general path, per-row scores and softmax over a whole padded tile, which made L=66 take 2.4x the time of
        // L=64). The tiles depend on s alone, so a row's operations still do not depend on the block or the threads.
        // Under a sliding window a block's last tile may also end at its last row's window (below): the columns past
        // it are past every row's window, so the rounding only adds keys of weight 0.
        // Causal attention's tiles are cut likewise at a block's last row (its diagonal tile): columns past it are
        // past every row's last key.
        boolean tailFast = fast;
        boolean shortFast = fast && !causal && s < BC;
        // causal attention is a window too (right = 0, left unbounded): its diagonal tiles cut for some rows
        boolean cut = windowed || causal;
        // keys past the last one the key-padding mask leaves visible (a decoding step's cache rows not yet written)
        // have weight 0 for every row: they are not read, so a step costs the rows in use, not the cache's capacity
        int jEnd = Math.min(causal ? Math.min(s, i0 + br) : s, masks.keyEnd(b));
        // a sliding window: the key tiles from the one holding the block's first row's first key to its last row's
        // last key; tiles wholly outside every row's window are never read (work and memory O(L x window))
        int left = masks.left(), right = masks.right(), jStart = 0;
        if (windowed) {
            jStart = (int) (Math.max(0L, (long) i0 - left) / tb * tb);
            jEnd = (int) Math.min(jEnd, (long) i0 + br + right);
            Arrays.fill(acc, 0, rows6 * dv, 0f); // a row's first tile is not always the block's first
        }
        if (br >= TOUCH_ROWS && jEnd > jStart) touch(k, ko + jStart * d, (jEnd - jStart) * d, sc.s);
        // the general path's tile width: a sequence shorter than one tile (a sentence) works on its own length rounded
        // up to the score kernel's two vectors, not on 64 keys, most of them padding. It depends on s alone, never on
        // the block, so a row's operations still do not depend on the block size or the thread count.
        // (bcp: the key rows' stride of a tile cut short; gw: the general path's columns, also its score rows' stride)
        int bcp = s < tb && !shortFast ? (s + 2 * VL - 1) / (2 * VL) * (2 * VL) : BCP;
        int gw = Math.min(bcp, tb);
        // a query of one row (a decoding step; padFast is off, so it runs the general path) computes its scores as dot
        // products along the head dimension on the keys in place, without the tiles' transposition, which for one row
        // cost more than the row's own products. The rule is the query length's (a shape), not the block's: block
        // sizes follow the thread count, and the last row of a longer query must not change its arithmetic with them
        // (nor with the padding rows a padded batch puts after it)
        boolean direct = l == 1;
        for (int j0 = jStart; j0 < jEnd; j0 += tb) {
            int bc = Math.min(tb, jEnd - j0);
            boolean tail = tailFast && bc < tb;
            int w = tail ? (bc + SHORT_KEYS - 1) / SHORT_KEYS * SHORT_KEYS : tb;
            // transpose the key tile: kt[dd * ktp + c] = k[j0 + c, dd], zero columns past bc (a short tile on the
            // fast path: up to w, the columns its kernels read); a whole tile at the kernels' stride BCP
            int ktp = bc == tb && s >= tb || tail ? BCP : bcp;
            if (direct) {
                // no transposed tile: general() reads the keys in place
            } else if (bc == tb && s >= tb) transposeTile(k, ko + j0 * d, d, kt, qscale, tb);
            else
                for (int c = 0, cols = tail ? w : gw; c < cols; c++) {
                    if (c < bc) {
                        int src = ko + (j0 + c) * d;
                        for (int dd = 0; dd < d; dd++) kt[dd * ktp + c] = k[src + dd] * qscale;
                    } else for (int dd = 0; dd < d; dd++) kt[dd * ktp + c] = 0f;
                }
            boolean fullTile = fast && (bc == tb || tail);
            // causal: rows above the tile's first key (i0 + r < j0) see none of it and are skipped, from a group start
            int first = causal ? Math.min(br, Math.max(0, j0 - i0)) / GR * GR : 0;
            // a sliding window: likewise rows whose window ends before the tile (i + right < j0); the loop stops at the
            // first group whose window starts after the tile's last key (i - left > j0 + bc - 1)
            if (windowed) first = Math.max(first, (int) Math.min(br, Math.max(0L, (long) j0 - right - i0)) / GR * GR);
            // a group of GR rows at a time: scores, softmax step and P.V while its scores are in L1
            for (int r = first; r < br; r += GR) {
                if (windowed && (long) i0 + r - left > j0 + bc - 1) break;
                int r1 = Math.min(br, r + GR), live = GR;
                // causal or a window (causal is one with right = 0): every query row of the group sees at least one
                // key of the tile (its first row's window reaches the tile, its last row's starts in it or before), and
                // clip says whether some row does not see all of them (a diagonal tile, a window's edge)
                int rowsLive = r == padFrom ? br - padFrom : GR;
                boolean clip = cut && ((long) i0 + r + rowsLive - 1 - left > j0 || (long) i0 + r + right < j0 + bc - 1);
                boolean fastGroup = fullTile
                        && (r < padFrom || padFast)
                        && (!cut
                                || ((long) i0 + r + rowsLive - 1 - left <= j0 + bc - 1 && (long) i0 + r + right >= j0));
                if (fastGroup) {
                    float[] qs = r == padFrom ? sc.qpad : q;
                    int qso = r == padFrom ? 0 : qo + r * d;
                    // rows of the group that are queries, not padding (the 2-row tiles of 16 registers skip pairs of
                    // padding; their scores are what a zero query gives with finite keys, 0; with a non-finite key the
                    // real rows' scores are not finite either, and the group takes the exact path all the same)
                    r1 = r + GR;
                    live = r == padFrom ? br - padFrom : GR;
                    // every chunk's scores within LAZY of their rows' running max, which must exist (scores of -inf
                    // pass the test against a max of -inf, and 2^(-inf - -inf) would be NaN)
                    boolean lazy = true;
                    for (int rr = r; rr < r1; rr++) lazy &= m[rr] != Float.NEGATIVE_INFINITY;
                    int c0 = 0;
                    for (; c0 + 4 * VL <= w; c0 += 4 * VL) lazy &= fastScores(qs, qso, d, kt, c0, st, r, m, live);
                    if (c0 < w)
                        lazy &= fastScores6x2(qs, qso, d, kt, c0, st, r, m); // a short sequence's last 2 vectors
                    if (relative) {
                        // the bias of each query row (not the padding rows), in base-2 units as the scores; the lazy
                        // test above saw the scores without it, so the rows take the exact step below
                        for (int rr = 0; rr < live; rr++)
                            masks.addRelative(st, rr * BCP, bc, h, i0 + r + rr, j0, LOG2E);
                        lazy = false;
                    }
                    if (bc < w) { // a short tile's padded keys
                        for (int rr = 0; rr < GR; rr++)
                            Arrays.fill(st, rr * BCP + bc, rr * BCP + w, Float.NEGATIVE_INFINITY);
                    }
                    // a window that cuts the tile for some rows: their keys outside it at -inf, then each row's own
                    // softmax step (its lazy test on the keys it sees only: the group's test above also read keys
                    // outside the windows, which a tile cut at a block's end would not have, so the path would depend
                    // on the block size). Padding rows keep their scores; their output is dropped.
                    if (clip || !(lazy || firstMax(st, r, m, w, lane))) {
                        for (int rr = 0; rr < GR; rr++) {
                            int lo = 0, hi = Math.min(bc, w);
                            if (clip && rr < live) {
                                long i = (long) i0 + r + rr;
                                lo = (int) Math.min(hi, Math.max(0L, i - left - j0));
                                hi = (int) Math.min(hi, Math.max(0L, i + right - j0 + 1));
                                Arrays.fill(st, rr * BCP, rr * BCP + lo, Float.NEGATIVE_INFINITY);
                                Arrays.fill(st, rr * BCP + hi, rr * BCP + bc, Float.NEGATIVE_INFINITY);
                            }
                            softmaxRow(st, rr * BCP, r + rr, w, lo, hi, sc);
                        }
                    } else expRows(st, r, m, sumv, corr, w);
                } else {
                    if (direct) directScores(q, qo + r * d, d, k, ko + j0 * d, bc, qscale, st);
                    else scores(q, qo, d, r, r1, kt, ktp, st, gw);
                    general(r, r1, bc, gw, st, masks, b, h, i0, j0, m, sum, sumv, corr, lane);
                }
                if (j0 == 0 && !windowed)
                    Arrays.fill(acc, r * dv, r1 * dv, 0f); // first visit: the rows' accumulators start at 0, in L1
                if (fastGroup && dv % ((Registers.FEW ? 4 : 2) * VL) == 0) {
                    // a fast group's rows see the whole tile (causal too: its first row is past the tile's last key),
                    // or under a window the keys up to its last row's window (as below)
                    int keys = cut ? (int) Math.min(bc, (long) i0 + r + live + right - j0) : bc;
                    int cv = 0;
                    for (; cv + 4 * VL <= dv; cv += 4 * VL)
                        accumulate6x4(st, corr, r, v, vo + j0 * dv + cv, dv, acc, r * dv + cv, live, keys);
                    // a last pair of vectors (32 registers): a head of 32 at 512 bits (MiniLM, bge-small, e5-small),
                    // whose rows took the general path's 4-row and single-row kernels before (the single rows' FMA
                    // chains waited on their latency: on a Zen 4, P.V was 20% of a MiniLM-shaped attention)
                    if (cv < dv) accumulate6x2(st, corr, r, v, vo + j0 * dv + cv, dv, acc, r * dv + cv, keys);
                } else {
                    // causal: the group's rows see no key past its last row (p = 0 there); those keys are left out, so
                    // a NaN in such a value row cannot reach them through 0 * NaN by way of a tile edge that depends
                    // on the block size (and so on the thread count)
                    // (a window's right side likewise: right is 0 under causal, large when unbounded)
                    int width = (int) Math.min(bc, (long) i0 + r1 + right - j0);
                    accumulate(st, fastGroup ? BCP : gw, corr, r, width, r1, v, vo + j0 * dv, dv, acc);
                }
            }
        }
        finish(br, sum, sumv, acc, dv, out, (qBase + i0) * dv);
    }

    /**
     * The block's rows are done: {@code out = acc / sum} (zeros where the sum is 0). A method of its own: inlined into
     * {@link #block}, the lane rotations of {@link Lanes#sum} compiled poorly (measured: 4% of the op's time). The lane
     * sums are reduced from memory ({@link Lanes#sum(float[], int)}, the same bits; {@code sumv} is cleared at the next
     * block's start): a vector handed to {@code Lanes.sum} that C2 did not inline was boxed, one per row (a steady-state
     * recording of ModernBERT, 2026-12-06).
     */
    private static void finish(int br, float[] sum, float[] sumv, float[] acc, int dv, float[] out, int oo) {
        for (int r = 0; r < br; r++) sum[r] += Lanes.sum(sumv, r * VL);
        for (int r = 0; r < br; r++) {
            if (sum[r] == 0f) Arrays.fill(out, oo + r * dv, oo + (r + 1) * dv, 0f);
            else {
                float inv = 1f / sum[r];
                int c = 0;
                for (int ub = SP.loopBound(dv); c < ub; c += VL)
                    FloatVector.fromArray(SP, acc, r * dv + c).mul(inv).intoArray(out, oo + r * dv + c);
                for (; c < dv; c++) out[oo + r * dv + c] = acc[r * dv + c] * inv;
            }
        }
    }

    /**
     * Reads {@code k[from, from + n)} once, in order, one vector per 64-byte line, before the key tiles are transposed:
     * a sequential pass that the hardware prefetcher streams, where the transposition's 16-row pattern would wait on
     * memory tile by tile (measured on Zen 5 at B=8 H=8 L=S=512 D=64: 3% faster overall). The sum goes to {@code
     * sink} only so that the loads are not optimised away.
     */
    private static void touch(float[] k, int from, int n, float[] sink) {
        FloatVector t = FloatVector.zero(SP);
        int step = Math.max(VL, 16), i = 0;
        for (; i + VL <= n; i += step) t = t.add(FloatVector.fromArray(SP, k, from + i));
        t.intoArray(sink, 0);
    }

    /**
     * A whole key tile of {@code keys} keys, transposed and scaled: {@code kt[dd * BCP + c] = k[src + c*d + dd] *
     * scale}.
     */
    private static void transposeTile(float[] k, int src, int d, float[] kt, float scale, int keys) {
        if (Transpose.AVAILABLE && d % 16 == 0 && keys % 16 == 0) {
            for (int c0 = 0; c0 < keys; c0 += 16)
                for (int d0 = 0; d0 < d; d0 += 16)
                    Transpose.block16(k, src + c0 * d + d0, d, kt, d0 * BCP + c0, BCP, scale);
        } else {
            for (int c = 0; c < keys; c++) {
                int from = src + c * d;
                for (int dd = 0; dd < d; dd++) kt[dd * BCP + c] = k[from + dd] * scale;
            }
        }
    }

    /**
     * {@code st[(r - r0) * w + c] = q[qo + r*d, :] . kt[dd * kp + c]} for {@code r0 <= r < br}, every {@code c < w}
     * (the tile width, a multiple of two vectors; {@code kp}: the key rows' stride, at least {@code w}).
     */
    private static void scores(float[] q, int qo, int d, int r0, int br, float[] kt, int kp, float[] st, int w) {
        int r = r0;
        for (; r + 4 <= br; r += 4) {
            int q0 = qo + r * d;
            for (int cv = 0; cv < w; cv += 2 * VL) {
                FloatVector a00 = FloatVector.zero(SP), a01 = a00, a10 = a00, a11 = a00;
                FloatVector a20 = a00, a21 = a00, a30 = a00, a31 = a00;
                for (int dd = 0; dd < d; dd++) {
                    FloatVector k0 = FloatVector.fromArray(SP, kt, dd * kp + cv);
                    FloatVector k1 = FloatVector.fromArray(SP, kt, dd * kp + cv + VL);
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
                int so = (r - r0) * w + cv;
                a00.intoArray(st, so);
                a01.intoArray(st, so + VL);
                a10.intoArray(st, so + w);
                a11.intoArray(st, so + w + VL);
                a20.intoArray(st, so + 2 * w);
                a21.intoArray(st, so + 2 * w + VL);
                a30.intoArray(st, so + 3 * w);
                a31.intoArray(st, so + 3 * w + VL);
            }
        }
        for (; r < br; r++) {
            int q0 = qo + r * d;
            for (int cv = 0; cv < w; cv += VL) {
                FloatVector a = FloatVector.zero(SP);
                for (int dd = 0; dd < d; dd++)
                    a = FloatVector.broadcast(SP, q[q0 + dd]).fma(FloatVector.fromArray(SP, kt, dd * kp + cv), a);
                a.intoArray(st, (r - r0) * w + cv);
            }
        }
    }

    /**
     * The fast path's scores for rows {@code r..r+5} (queries at {@code q[qo..]}) against {@code 4 * VL} keys
     * (columns {@code c0..} of the transposed tile), 24 accumulators, stored to {@code st[rr * BCP + c0..]}. Returns
     * whether none of them exceeds its row's running max by more than {@link #LAZY}, tested while they are still in
     * registers: then {@link #expRows} may use the running max as it is. A row without a max yet ({@code -inf}) fails;
     * NaN passes and flows into the output.
     */
    private static boolean fastScores(
            float[] q, int qo, int d, float[] kt, int c0, float[] st, int r, float[] m, int live) {
        if (Registers.FEW) {
            boolean lazy = true;
            for (int i = 0; i < GR; i += 2)
                if (i < live) lazy &= fastScores2(q, qo + i * d, d, kt, c0, st, i * BCP, m, r + i);
                else { // two padding rows (zero queries): their scores are 0, never over their max (>= 0)
                    Arrays.fill(st, i * BCP + c0, i * BCP + c0 + 4 * VL, 0f);
                    Arrays.fill(st, (i + 1) * BCP + c0, (i + 1) * BCP + c0 + 4 * VL, 0f);
                }
            return lazy;
        }
        FloatVector a00 = FloatVector.zero(SP), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        FloatVector a40 = a00, a41 = a00, a42 = a00, a43 = a00;
        FloatVector a50 = a00, a51 = a00, a52 = a00, a53 = a00;
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
            x = FloatVector.broadcast(SP, q[qo + 4 * d + dd]);
            a40 = x.fma(k0, a40);
            a41 = x.fma(k1, a41);
            a42 = x.fma(k2, a42);
            a43 = x.fma(k3, a43);
            x = FloatVector.broadcast(SP, q[qo + 5 * d + dd]);
            a50 = x.fma(k0, a50);
            a51 = x.fma(k1, a51);
            a52 = x.fma(k2, a52);
            a53 = x.fma(k3, a53);
        }
        long over = 0;
        FloatVector t0 = FloatVector.broadcast(SP, m[r] + LAZY);
        over |= a00.compare(VectorOperators.GT, t0)
                .or(a01.compare(VectorOperators.GT, t0))
                .or(a02.compare(VectorOperators.GT, t0))
                .or(a03.compare(VectorOperators.GT, t0))
                .toLong();
        FloatVector t1 = FloatVector.broadcast(SP, m[r + 1] + LAZY);
        over |= a10.compare(VectorOperators.GT, t1)
                .or(a11.compare(VectorOperators.GT, t1))
                .or(a12.compare(VectorOperators.GT, t1))
                .or(a13.compare(VectorOperators.GT, t1))
                .toLong();
        FloatVector t2 = FloatVector.broadcast(SP, m[r + 2] + LAZY);
        over |= a20.compare(VectorOperators.GT, t2)
                .or(a21.compare(VectorOperators.GT, t2))
                .or(a22.compare(VectorOperators.GT, t2))
                .or(a23.compare(VectorOperators.GT, t2))
                .toLong();
        FloatVector t3 = FloatVector.broadcast(SP, m[r + 3] + LAZY);
        over |= a30.compare(VectorOperators.GT, t3)
                .or(a31.compare(VectorOperators.GT, t3))
                .or(a32.compare(VectorOperators.GT, t3))
                .or(a33.compare(VectorOperators.GT, t3))
                .toLong();
        FloatVector t4 = FloatVector.broadcast(SP, m[r + 4] + LAZY);
        over |= a40.compare(VectorOperators.GT, t4)
                .or(a41.compare(VectorOperators.GT, t4))
                .or(a42.compare(VectorOperators.GT, t4))
                .or(a43.compare(VectorOperators.GT, t4))
                .toLong();
        FloatVector t5 = FloatVector.broadcast(SP, m[r + 5] + LAZY);
        over |= a50.compare(VectorOperators.GT, t5)
                .or(a51.compare(VectorOperators.GT, t5))
                .or(a52.compare(VectorOperators.GT, t5))
                .or(a53.compare(VectorOperators.GT, t5))
                .toLong();
        a00.intoArray(st, c0);
        a01.intoArray(st, c0 + VL);
        a02.intoArray(st, c0 + 2 * VL);
        a03.intoArray(st, c0 + 3 * VL);
        a10.intoArray(st, c0 + BCP);
        a11.intoArray(st, c0 + BCP + VL);
        a12.intoArray(st, c0 + BCP + 2 * VL);
        a13.intoArray(st, c0 + BCP + 3 * VL);
        a20.intoArray(st, c0 + 2 * BCP);
        a21.intoArray(st, c0 + 2 * BCP + VL);
        a22.intoArray(st, c0 + 2 * BCP + 2 * VL);
        a23.intoArray(st, c0 + 2 * BCP + 3 * VL);
        a30.intoArray(st, c0 + 3 * BCP);
        a31.intoArray(st, c0 + 3 * BCP + VL);
        a32.intoArray(st, c0 + 3 * BCP + 2 * VL);
        a33.intoArray(st, c0 + 3 * BCP + 3 * VL);
        a40.intoArray(st, c0 + 4 * BCP);
        a41.intoArray(st, c0 + 4 * BCP + VL);
        a42.intoArray(st, c0 + 4 * BCP + 2 * VL);
        a43.intoArray(st, c0 + 4 * BCP + 3 * VL);
        a50.intoArray(st, c0 + 5 * BCP);
        a51.intoArray(st, c0 + 5 * BCP + VL);
        a52.intoArray(st, c0 + 5 * BCP + 2 * VL);
        a53.intoArray(st, c0 + 5 * BCP + 3 * VL);
        return over == 0;
    }

    /**
     * The first tile a group's rows see (no running max yet, so {@link #fastScores}'s test failed): when the group's
     * tile maxima are finite, makes them the running maxima and returns true, so the group takes {@link #expRows}
     * like any other tile; otherwise (a row already has a max, or an infinite or NaN score) changes nothing and
     * returns false for {@link #softmaxRow}, which clamps.
     */
    private static boolean firstMax(float[] st, int r, float[] m, int w, float[] lane) {
        for (int rr = 0; rr < GR; rr++) if (m[r + rr] != Float.NEGATIVE_INFINITY) return false;
        for (int rr = 0; rr < GR; rr++) {
            float x = rowMax(st, rr * BCP, w, lane);
            if (!Float.isFinite(x)) {
                Arrays.fill(m, r, r + rr, Float.NEGATIVE_INFINITY);
                return false;
            }
            m[r + rr] = x;
        }
        return true;
    }

    /**
     * The largest of the {@code w} scores at {@code st[so..]} (compare-and-blend; see {@link Lanes#max}), the lanes'
     * maxima reduced through {@code lane} (see {@link VExp#exp2Sub}).
     */
    private static float rowMax(float[] st, int so, int w, float[] lane) {
        FloatVector mx = FloatVector.fromArray(SP, st, so);
        for (int c = VL; c < w; c += VL) {
            FloatVector x = FloatVector.fromArray(SP, st, so + c);
            mx = mx.blend(x, mx.compare(VectorOperators.LT, x));
        }
        mx.intoArray(lane, 0);
        return Lanes.max(lane, 0);
    }

    /**
     * {@code p = 2^(s - m)} in place for the rows of a group whose tile passed {@link #fastScores}'s test, added to
     * the rows' vector sums (reduced once, at the end of the block); no rescale ({@code corr = 1}).
     */
    private static void expRows(float[] st, int r, float[] m, float[] sumv, float[] corr, int w) {
        for (int rr = 0; rr < GR; rr++) {
            VExp.exp2Sub(st, rr * BCP, w, m[r + rr], sumv, (r + rr) * VL, true);
            corr[r + rr] = 1f;
        }
    }

    /**
     * Masks and the online-softmax step for rows {@code [r0, r1)} of the block, any mask, on their raw scores in
     * {@code st} (row {@code r} at {@code (r - r0) * bcp}, scaled by {@code scale * log2(e)}).
     */
    private static void general(
            int r0,
            int r1,
            int bc,
            int bcp,
            float[] st,
            Masks masks,
            int b,
            int h,
            int i0,
            int j0,
            float[] m,
            float[] sum,
            float[] sumv,
            float[] corr,
            float[] lane) {
        for (int r = r0; r < r1; r++) {
            int so = (r - r0) * bcp;
            masks.apply(st, so, bc, b, h, i0 + r, j0, 1f, LOG2E);
            float mt = Softmax.max(st, so, bc);
            float mNew = Math.max(m[r], mt);
            if (mNew == Float.NEGATIVE_INFINITY) { // every key so far masked: this tile adds nothing
                Arrays.fill(st, so, so + bc, 0f);
                corr[r] = 1f;
                continue;
            }
            float cr = mNew == m[r] ? 1f : exp2(m[r] - mNew); // 0 when m was -inf
            // the sum runs over the whole padded tile, columns past bc at p = 0: its order is then the same whatever
            // bc is, and bc (the block's last tile is cut at the block's end under a causal mask) depends on the
            // block size, so on the thread count
            Arrays.fill(st, so + bc, so + bcp, Float.NEGATIVE_INFINITY);
            float rowSum = exp2Sub(st, so, bcp, mNew, lane);
            sum[r] = sum[r] * cr + rowSum;
            if (cr != 1f) FloatVector.fromArray(SP, sumv, r * VL).mul(cr).intoArray(sumv, r * VL);
            m[r] = mNew;
            corr[r] = cr;
        }
    }

    /**
     * One query row's scores against {@code n} keys read in place: {@code st[c] = (q[qo..] . k[ko + c*d..]) * scale}
     * for {@code c < n}, the dot product over the head dimension in vectors, two accumulators, then a fixed-order lane
     * sum ({@link Lanes#sum}) and the scalar tail: the same operations for a key whatever the tile, block or thread
     * count.
     */
    private static void directScores(float[] q, int qo, int d, float[] k, int ko, int n, float scale, float[] st) {
        int ub = SP.loopBound(d), ub2 = d / (2 * VL) * (2 * VL);
        for (int c = 0; c < n; c++) {
            int kr = ko + c * d;
            FloatVector a0 = FloatVector.zero(SP), a1 = a0;
            int dd = 0;
            for (; dd < ub2; dd += 2 * VL) {
                a0 = FloatVector.fromArray(SP, q, qo + dd).fma(FloatVector.fromArray(SP, k, kr + dd), a0);
                a1 = FloatVector.fromArray(SP, q, qo + dd + VL).fma(FloatVector.fromArray(SP, k, kr + dd + VL), a1);
            }
            if (dd < ub) a0 = FloatVector.fromArray(SP, q, qo + dd).fma(FloatVector.fromArray(SP, k, kr + dd), a0);
            float x = Lanes.sum(a0.add(a1));
            for (dd = ub; dd < d; dd++) x = Math.fma(q[qo + dd], k[kr + dd], x);
            st[c] = x * scale;
        }
    }

    /**
     * The online-softmax step for one row of a tile ({@code w} scores in base-2 units at {@code st[so..]}, those outside
     * {@code [lo, hi)} -inf: a short tile's padding, keys outside a window) when the group failed {@link #fastScores}'s
     * test or a window cuts the tile: the lazy test again for this row alone ({@link #lazyRow}), else {@link
     * #clampedRow}. The row's running state (max, sum, lane sums, rescale factor) is the thread's {@link Scratch}.
     * Their exponentials are {@link VExp#exp2Sub}, a loop over the row: no vector crosses a call that C2 may decline to
     * inline (see there).
     */
    private static void softmaxRow(float[] st, int so, int r, int w, int lo, int hi, Scratch sc) {
        if (sc.m[r] != Float.NEGATIVE_INFINITY && lazyRow(st, so, r, w, sc)) return;
        clampedRow(st, so, r, w, lo, hi, sc);
    }

    /**
     * Lazy max: while no score exceeds the row's running max by more than LAZY, keep it (softmax does not
     * depend on the offset; p <= 2^LAZY cannot overflow a float sum). This needs only a vector compare, not a
     * horizontal max, no rescale factor and no exp of it. NaN fails the compare and flows into the output as it would
     * on the general path; -inf gives p = 0 on both paths; +inf goes the slow way. False (nothing written) when a
     * score is past the margin.
     */
    private static boolean lazyRow(float[] st, int so, int r, int w, Scratch sc) {
        float mOld = sc.m[r];
        FloatVector mx = FloatVector.fromArray(SP, st, so);
        for (int c = VL; c < w; c += VL) mx = mx.max(FloatVector.fromArray(SP, st, so + c));
        if (mx.compare(VectorOperators.GT, mOld + LAZY).anyTrue()) return false;
        VExp.exp2Sub(st, so, w, mOld, sc.lane, 0, false);
        sc.l[r] += Lanes.sum(sc.lane, 0); // fixed order: bitwise-reproducible across JIT tiers
        sc.corr[r] = 1f;
        return true;
    }

    /**
     * The exact step: clamp to finite (as {@link Masks#apply} does), the columns outside {@code [lo, hi)} back to
     * -inf, tile max, {@code p = 2^(s - m_new)} stored back, and the row's running max, sum and rescale factor
     * updated.
     */
    private static void clampedRow(float[] st, int so, int r, int w, int lo, int hi, Scratch sc) {
        float[] m = sc.m, sum = sc.l, sumv = sc.sumv, corr = sc.corr, lane = sc.lane;
        float mOld = m[r];
        final float big = Float.MAX_VALUE;
        FloatVector mx = FloatVector.broadcast(SP, Float.NEGATIVE_INFINITY);
        for (int c = 0; c < w; c += VL) {
            FloatVector x = FloatVector.fromArray(SP, st, so + c).max(-big).min(big);
            x.intoArray(st, so + c);
            mx = mx.max(x);
        }
        // a short tile's padded keys and the keys outside a window (-inf before the clamp: the columns outside [lo,
        // hi)) get no weight: the clamp made them finite
        if (lo > 0) Arrays.fill(st, so, so + lo, Float.NEGATIVE_INFINITY);
        if (hi < w) Arrays.fill(st, so + hi, so + w, Float.NEGATIVE_INFINITY);
        float mNew = Math.max(mOld, mx.reduceLanes(VectorOperators.MAX));
        float cr = mNew == mOld ? 1f : exp2(mOld - mNew); // 0 when m was -inf
        VExp.exp2Sub(st, so, w, mNew, lane, 0, false);
        sum[r] = sum[r] * cr + Lanes.sum(lane, 0);
        if (cr != 1f) FloatVector.fromArray(SP, sumv, r * VL).mul(cr).intoArray(sumv, r * VL);
        m[r] = mNew;
        corr[r] = cr;
    }

    /**
     * {@code acc[r, :] = corr[r] acc[r, :] + sum_c p[r, c] v[c, :]} for {@code r0 <= r < br} ({@code r0} a multiple of 4), {@code c < bc}; v rows start
     * at {@code vo}. The online-softmax rescale rides along with the load of the accumulator.
     */
    private static void accumulate(
            float[] p, int ps, float[] corr, int r0, int bc, int br, float[] v, int vo, int dv, float[] acc) {
        int ub = SP.loopBound(dv);
        int r = r0;
        int ub2 = dv / (2 * VL) * (2 * VL);
        int ub4 = dv / (4 * VL) * (4 * VL);
        for (; r + 4 <= br; r += 4) {
            int p0 = (r - r0) * ps, a0 = r * dv;
            for (int cv = 0; cv < ub4; cv += 4 * VL)
                accumulate4x4(p, p0, ps, corr, r, bc, v, vo + cv, dv, acc, a0 + cv);
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
                    w = FloatVector.broadcast(SP, p[p0 + ps + c]);
                    x1 = w.fma(v0, x1);
                    y1 = w.fma(v1, y1);
                    w = FloatVector.broadcast(SP, p[p0 + 2 * ps + c]);
                    x2 = w.fma(v0, x2);
                    y2 = w.fma(v1, y2);
                    w = FloatVector.broadcast(SP, p[p0 + 3 * ps + c]);
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
                    x1 = FloatVector.broadcast(SP, p[p0 + ps + c]).fma(vv, x1);
                    x2 = FloatVector.broadcast(SP, p[p0 + 2 * ps + c]).fma(vv, x2);
                    x3 = FloatVector.broadcast(SP, p[p0 + 3 * ps + c]).fma(vv, x3);
                }
                x0.intoArray(acc, a0 + cv);
                x1.intoArray(acc, a0 + dv + cv);
                x2.intoArray(acc, a0 + 2 * dv + cv);
                x3.intoArray(acc, a0 + 3 * dv + cv);
            }
            for (int rr = r; rr < r + 4; rr++) tail(p, (rr - r0) * ps, corr[rr], bc, v, vo, dv, ub, acc, rr * dv);
        }
        for (; r < br; r++) {
            int p0 = (r - r0) * ps, a0 = r * dv;
            int cv = 0;
            for (; cv < ub4; cv += 4 * VL) accumulateRow4(p, p0, corr[r], bc, v, vo + cv, dv, acc, a0 + cv);
            for (; cv < ub; cv += VL) {
                // even and odd keys in two chains: one chain of bc dependent FMAs waited on their latency
                FloatVector x0 = FloatVector.fromArray(SP, acc, a0 + cv).mul(corr[r]), y0 = FloatVector.zero(SP);
                int c = 0;
                for (; c + 2 <= bc; c += 2) {
                    x0 = FloatVector.broadcast(SP, p[p0 + c]).fma(FloatVector.fromArray(SP, v, vo + c * dv + cv), x0);
                    y0 = FloatVector.broadcast(SP, p[p0 + c + 1])
                            .fma(FloatVector.fromArray(SP, v, vo + (c + 1) * dv + cv), y0);
                }
                if (c < bc)
                    x0 = FloatVector.broadcast(SP, p[p0 + c]).fma(FloatVector.fromArray(SP, v, vo + c * dv + cv), x0);
                x0.add(y0).intoArray(acc, a0 + cv);
            }
            tail(p, p0, corr[r], bc, v, vo, dv, ub, acc, a0);
        }
    }

    /**
     * {@link #accumulate} for one row and four vectors of columns, the keys read once: {@code acc[a0..] = corr
     * acc[a0..] + sum_c p[p0 + c] v[vo + c*dv..]}, even and odd keys in separate accumulators (8 chains, where one per
     * vector waited on the FMA latency), added at the end. A row's sums then run in this order on every tile.
     */
    private static void accumulateRow4(
            float[] p, int p0, float corr, int bc, float[] v, int vo, int dv, float[] acc, int a0) {
        FloatVector x0 = FloatVector.fromArray(SP, acc, a0).mul(corr);
        FloatVector x1 = FloatVector.fromArray(SP, acc, a0 + VL).mul(corr);
        FloatVector x2 = FloatVector.fromArray(SP, acc, a0 + 2 * VL).mul(corr);
        FloatVector x3 = FloatVector.fromArray(SP, acc, a0 + 3 * VL).mul(corr);
        FloatVector y0 = FloatVector.zero(SP), y1 = y0, y2 = y0, y3 = y0;
        int c = 0;
        for (; c + 2 <= bc; c += 2) {
            int o = vo + c * dv;
            FloatVector w = FloatVector.broadcast(SP, p[p0 + c]);
            x0 = w.fma(FloatVector.fromArray(SP, v, o), x0);
            x1 = w.fma(FloatVector.fromArray(SP, v, o + VL), x1);
            x2 = w.fma(FloatVector.fromArray(SP, v, o + 2 * VL), x2);
            x3 = w.fma(FloatVector.fromArray(SP, v, o + 3 * VL), x3);
            o += dv;
            w = FloatVector.broadcast(SP, p[p0 + c + 1]);
            y0 = w.fma(FloatVector.fromArray(SP, v, o), y0);
            y1 = w.fma(FloatVector.fromArray(SP, v, o + VL), y1);
            y2 = w.fma(FloatVector.fromArray(SP, v, o + 2 * VL), y2);
            y3 = w.fma(FloatVector.fromArray(SP, v, o + 3 * VL), y3);
        }
        if (c < bc) {
            int o = vo + c * dv;
            FloatVector w = FloatVector.broadcast(SP, p[p0 + c]);
            x0 = w.fma(FloatVector.fromArray(SP, v, o), x0);
            x1 = w.fma(FloatVector.fromArray(SP, v, o + VL), x1);
            x2 = w.fma(FloatVector.fromArray(SP, v, o + 2 * VL), x2);
            x3 = w.fma(FloatVector.fromArray(SP, v, o + 3 * VL), x3);
        }
        x0.add(y0).intoArray(acc, a0);
        x1.add(y1).intoArray(acc, a0 + VL);
        x2.add(y2).intoArray(acc, a0 + 2 * VL);
        x3.add(y3).intoArray(acc, a0 + 3 * VL);
    }

    /**
     * {@link #accumulate} for rows {@code r..r+3} and four vectors of columns (16 accumulators): {@code acc[a0 + i*dv
     * ..] = corr[r+i] acc[..] + sum_c p[p0 + i*ps + c] v[vo + c*dv ..]} ({@code ps} the probabilities' row stride).
     */
    private static void accumulate4x4(
            float[] p, int p0, int ps, float[] corr, int r, int bc, float[] v, int vo, int dv, float[] acc, int a0) {
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
            w = FloatVector.broadcast(SP, p[p0 + ps + c]);
            x10 = w.fma(v0, x10);
            x11 = w.fma(v1, x11);
            x12 = w.fma(v2, x12);
            x13 = w.fma(v3, x13);
            w = FloatVector.broadcast(SP, p[p0 + 2 * ps + c]);
            x20 = w.fma(v0, x20);
            x21 = w.fma(v1, x21);
            x22 = w.fma(v2, x22);
            x23 = w.fma(v3, x23);
            w = FloatVector.broadcast(SP, p[p0 + 3 * ps + c]);
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

    /**
     * {@code P.V} for a fast group: rows {@code r..r+5} (probabilities {@code p[i * BCP + c]}, {@code c < keys}: BC, or
     * a short sequence's length) and four
     * vectors of value columns at {@code v[vo + c*dv ..]}, 24 accumulators that start at zero;
     * {@code acc[a0 + i*dv ..] = corr[r+i] acc[..] + sum}, so the accumulator is read only once the sums are done.
     */
    private static void accumulate6x4(
            float[] p, float[] corr, int r, float[] v, int vo, int dv, float[] acc, int a0, int live, int keys) {
        if (Registers.FEW) { // pairs of padding rows only are skipped: their output is never stored
            for (int i = 0; i < live; i += 2) accumulate2x4(p, i * BCP, corr, r + i, v, vo, dv, acc, a0 + i * dv, keys);
            return;
        }
        FloatVector x00 = FloatVector.zero(SP), x01 = x00, x02 = x00, x03 = x00;
        FloatVector x10 = x00, x11 = x00, x12 = x00, x13 = x00;
        FloatVector x20 = x00, x21 = x00, x22 = x00, x23 = x00;
        FloatVector x30 = x00, x31 = x00, x32 = x00, x33 = x00;
        FloatVector x40 = x00, x41 = x00, x42 = x00, x43 = x00;
        FloatVector x50 = x00, x51 = x00, x52 = x00, x53 = x00;
        for (int c = 0, vc = vo; c < keys; c++, vc += dv) {
            FloatVector v0 = FloatVector.fromArray(SP, v, vc);
            FloatVector v1 = FloatVector.fromArray(SP, v, vc + VL);
            FloatVector v2 = FloatVector.fromArray(SP, v, vc + 2 * VL);
            FloatVector v3 = FloatVector.fromArray(SP, v, vc + 3 * VL);
            FloatVector w = FloatVector.broadcast(SP, p[c]);
            x00 = w.fma(v0, x00);
            x01 = w.fma(v1, x01);
            x02 = w.fma(v2, x02);
            x03 = w.fma(v3, x03);
            w = FloatVector.broadcast(SP, p[BCP + c]);
            x10 = w.fma(v0, x10);
            x11 = w.fma(v1, x11);
            x12 = w.fma(v2, x12);
            x13 = w.fma(v3, x13);
            w = FloatVector.broadcast(SP, p[2 * BCP + c]);
            x20 = w.fma(v0, x20);
            x21 = w.fma(v1, x21);
            x22 = w.fma(v2, x22);
            x23 = w.fma(v3, x23);
            w = FloatVector.broadcast(SP, p[3 * BCP + c]);
            x30 = w.fma(v0, x30);
            x31 = w.fma(v1, x31);
            x32 = w.fma(v2, x32);
            x33 = w.fma(v3, x33);
            w = FloatVector.broadcast(SP, p[4 * BCP + c]);
            x40 = w.fma(v0, x40);
            x41 = w.fma(v1, x41);
            x42 = w.fma(v2, x42);
            x43 = w.fma(v3, x43);
            w = FloatVector.broadcast(SP, p[5 * BCP + c]);
            x50 = w.fma(v0, x50);
            x51 = w.fma(v1, x51);
            x52 = w.fma(v2, x52);
            x53 = w.fma(v3, x53);
        }
        FloatVector c0 = FloatVector.broadcast(SP, corr[r]);
        int o0 = a0;
        FloatVector.fromArray(SP, acc, o0).fma(c0, x00).intoArray(acc, o0);
        FloatVector.fromArray(SP, acc, o0 + VL).fma(c0, x01).intoArray(acc, o0 + VL);
        FloatVector.fromArray(SP, acc, o0 + 2 * VL).fma(c0, x02).intoArray(acc, o0 + 2 * VL);
        FloatVector.fromArray(SP, acc, o0 + 3 * VL).fma(c0, x03).intoArray(acc, o0 + 3 * VL);
        FloatVector c1 = FloatVector.broadcast(SP, corr[r + 1]);
        int o1 = a0 + dv;
        FloatVector.fromArray(SP, acc, o1).fma(c1, x10).intoArray(acc, o1);
        FloatVector.fromArray(SP, acc, o1 + VL).fma(c1, x11).intoArray(acc, o1 + VL);
        FloatVector.fromArray(SP, acc, o1 + 2 * VL).fma(c1, x12).intoArray(acc, o1 + 2 * VL);
        FloatVector.fromArray(SP, acc, o1 + 3 * VL).fma(c1, x13).intoArray(acc, o1 + 3 * VL);
        FloatVector c2 = FloatVector.broadcast(SP, corr[r + 2]);
        int o2 = a0 + 2 * dv;
        FloatVector.fromArray(SP, acc, o2).fma(c2, x20).intoArray(acc, o2);
        FloatVector.fromArray(SP, acc, o2 + VL).fma(c2, x21).intoArray(acc, o2 + VL);
        FloatVector.fromArray(SP, acc, o2 + 2 * VL).fma(c2, x22).intoArray(acc, o2 + 2 * VL);
        FloatVector.fromArray(SP, acc, o2 + 3 * VL).fma(c2, x23).intoArray(acc, o2 + 3 * VL);
        FloatVector c3 = FloatVector.broadcast(SP, corr[r + 3]);
        int o3 = a0 + 3 * dv;
        FloatVector.fromArray(SP, acc, o3).fma(c3, x30).intoArray(acc, o3);
        FloatVector.fromArray(SP, acc, o3 + VL).fma(c3, x31).intoArray(acc, o3 + VL);
        FloatVector.fromArray(SP, acc, o3 + 2 * VL).fma(c3, x32).intoArray(acc, o3 + 2 * VL);
        FloatVector.fromArray(SP, acc, o3 + 3 * VL).fma(c3, x33).intoArray(acc, o3 + 3 * VL);
        FloatVector c4 = FloatVector.broadcast(SP, corr[r + 4]);
        int o4 = a0 + 4 * dv;
        FloatVector.fromArray(SP, acc, o4).fma(c4, x40).intoArray(acc, o4);
        FloatVector.fromArray(SP, acc, o4 + VL).fma(c4, x41).intoArray(acc, o4 + VL);
        FloatVector.fromArray(SP, acc, o4 + 2 * VL).fma(c4, x42).intoArray(acc, o4 + 2 * VL);
        FloatVector.fromArray(SP, acc, o4 + 3 * VL).fma(c4, x43).intoArray(acc, o4 + 3 * VL);
        FloatVector c5 = FloatVector.broadcast(SP, corr[r + 5]);
        int o5 = a0 + 5 * dv;
        FloatVector.fromArray(SP, acc, o5).fma(c5, x50).intoArray(acc, o5);
        FloatVector.fromArray(SP, acc, o5 + VL).fma(c5, x51).intoArray(acc, o5 + VL);
        FloatVector.fromArray(SP, acc, o5 + 2 * VL).fma(c5, x52).intoArray(acc, o5 + 2 * VL);
        FloatVector.fromArray(SP, acc, o5 + 3 * VL).fma(c5, x53).intoArray(acc, o5 + 3 * VL);
    }

    /**
     * {@link #accumulate6x4} for two vectors of value columns (12 accumulators, 32 registers only): rows {@code r..r+5}
     * of a fast group, padding rows included (their output is never stored). The same order of operations per element
     * as {@link #accumulate6x4}: the keys' products summed from zero in one chain, then {@code acc = corr acc + sum}.
     */
    private static void accumulate6x2(
            float[] p, float[] corr, int r, float[] v, int vo, int dv, float[] acc, int a0, int keys) {
        FloatVector x00 = FloatVector.zero(SP), x01 = x00, x10 = x00, x11 = x00, x20 = x00, x21 = x00;
        FloatVector x30 = x00, x31 = x00, x40 = x00, x41 = x00, x50 = x00, x51 = x00;
        for (int c = 0, vc = vo; c < keys; c++, vc += dv) {
            FloatVector v0 = FloatVector.fromArray(SP, v, vc);
            FloatVector v1 = FloatVector.fromArray(SP, v, vc + VL);
            FloatVector w = FloatVector.broadcast(SP, p[c]);
            x00 = w.fma(v0, x00);
            x01 = w.fma(v1, x01);
            w = FloatVector.broadcast(SP, p[BCP + c]);
            x10 = w.fma(v0, x10);
            x11 = w.fma(v1, x11);
            w = FloatVector.broadcast(SP, p[2 * BCP + c]);
            x20 = w.fma(v0, x20);
            x21 = w.fma(v1, x21);
            w = FloatVector.broadcast(SP, p[3 * BCP + c]);
            x30 = w.fma(v0, x30);
            x31 = w.fma(v1, x31);
            w = FloatVector.broadcast(SP, p[4 * BCP + c]);
            x40 = w.fma(v0, x40);
            x41 = w.fma(v1, x41);
            w = FloatVector.broadcast(SP, p[5 * BCP + c]);
            x50 = w.fma(v0, x50);
            x51 = w.fma(v1, x51);
        }
        FloatVector c0 = FloatVector.broadcast(SP, corr[r]);
        FloatVector.fromArray(SP, acc, a0).fma(c0, x00).intoArray(acc, a0);
        FloatVector.fromArray(SP, acc, a0 + VL).fma(c0, x01).intoArray(acc, a0 + VL);
        FloatVector c1 = FloatVector.broadcast(SP, corr[r + 1]);
        int o1 = a0 + dv;
        FloatVector.fromArray(SP, acc, o1).fma(c1, x10).intoArray(acc, o1);
        FloatVector.fromArray(SP, acc, o1 + VL).fma(c1, x11).intoArray(acc, o1 + VL);
        FloatVector c2 = FloatVector.broadcast(SP, corr[r + 2]);
        int o2 = a0 + 2 * dv;
        FloatVector.fromArray(SP, acc, o2).fma(c2, x20).intoArray(acc, o2);
        FloatVector.fromArray(SP, acc, o2 + VL).fma(c2, x21).intoArray(acc, o2 + VL);
        FloatVector c3 = FloatVector.broadcast(SP, corr[r + 3]);
        int o3 = a0 + 3 * dv;
        FloatVector.fromArray(SP, acc, o3).fma(c3, x30).intoArray(acc, o3);
        FloatVector.fromArray(SP, acc, o3 + VL).fma(c3, x31).intoArray(acc, o3 + VL);
        FloatVector c4 = FloatVector.broadcast(SP, corr[r + 4]);
        int o4 = a0 + 4 * dv;
        FloatVector.fromArray(SP, acc, o4).fma(c4, x40).intoArray(acc, o4);
        FloatVector.fromArray(SP, acc, o4 + VL).fma(c4, x41).intoArray(acc, o4 + VL);
        FloatVector c5 = FloatVector.broadcast(SP, corr[r + 5]);
        int o5 = a0 + 5 * dv;
        FloatVector.fromArray(SP, acc, o5).fma(c5, x50).intoArray(acc, o5);
        FloatVector.fromArray(SP, acc, o5 + VL).fma(c5, x51).intoArray(acc, o5 + VL);
    }

    /**
     * {@link #fastScores} on {@code 2 * VL} keys (columns {@code c0..}): the last chunk of a short sequence whose keys
     * round up to an odd number of vector pairs ({@link #SHORT_KEYS}); 12 accumulators, 32 registers only.
     */
    private static boolean fastScores6x2(float[] q, int qo, int d, float[] kt, int c0, float[] st, int r, float[] m) {
        FloatVector a00 = FloatVector.zero(SP), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
        FloatVector a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
        for (int dd = 0; dd < d; dd++) {
            int ko = dd * BCP + c0;
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            FloatVector k1 = FloatVector.fromArray(SP, kt, ko + VL);
            FloatVector x = FloatVector.broadcast(SP, q[qo + dd]);
            a00 = x.fma(k0, a00);
            a01 = x.fma(k1, a01);
            x = FloatVector.broadcast(SP, q[qo + d + dd]);
            a10 = x.fma(k0, a10);
            a11 = x.fma(k1, a11);
            x = FloatVector.broadcast(SP, q[qo + 2 * d + dd]);
            a20 = x.fma(k0, a20);
            a21 = x.fma(k1, a21);
            x = FloatVector.broadcast(SP, q[qo + 3 * d + dd]);
            a30 = x.fma(k0, a30);
            a31 = x.fma(k1, a31);
            x = FloatVector.broadcast(SP, q[qo + 4 * d + dd]);
            a40 = x.fma(k0, a40);
            a41 = x.fma(k1, a41);
            x = FloatVector.broadcast(SP, q[qo + 5 * d + dd]);
            a50 = x.fma(k0, a50);
            a51 = x.fma(k1, a51);
        }
        FloatVector t0 = FloatVector.broadcast(SP, m[r] + LAZY);
        FloatVector t1 = FloatVector.broadcast(SP, m[r + 1] + LAZY);
        FloatVector t2 = FloatVector.broadcast(SP, m[r + 2] + LAZY);
        FloatVector t3 = FloatVector.broadcast(SP, m[r + 3] + LAZY);
        FloatVector t4 = FloatVector.broadcast(SP, m[r + 4] + LAZY);
        FloatVector t5 = FloatVector.broadcast(SP, m[r + 5] + LAZY);
        long over = a00.compare(VectorOperators.GT, t0)
                .or(a01.compare(VectorOperators.GT, t0))
                .or(a10.compare(VectorOperators.GT, t1))
                .or(a11.compare(VectorOperators.GT, t1))
                .or(a20.compare(VectorOperators.GT, t2))
                .or(a21.compare(VectorOperators.GT, t2))
                .or(a30.compare(VectorOperators.GT, t3))
                .or(a31.compare(VectorOperators.GT, t3))
                .or(a40.compare(VectorOperators.GT, t4))
                .or(a41.compare(VectorOperators.GT, t4))
                .or(a50.compare(VectorOperators.GT, t5))
                .or(a51.compare(VectorOperators.GT, t5))
                .toLong();
        a00.intoArray(st, c0);
        a01.intoArray(st, c0 + VL);
        a10.intoArray(st, c0 + BCP);
        a11.intoArray(st, c0 + BCP + VL);
        a20.intoArray(st, c0 + 2 * BCP);
        a21.intoArray(st, c0 + 2 * BCP + VL);
        a30.intoArray(st, c0 + 3 * BCP);
        a31.intoArray(st, c0 + 3 * BCP + VL);
        a40.intoArray(st, c0 + 4 * BCP);
        a41.intoArray(st, c0 + 4 * BCP + VL);
        a50.intoArray(st, c0 + 5 * BCP);
        a51.intoArray(st, c0 + 5 * BCP + VL);
        return over == 0;
    }

    /**
     * {@link #fastScores} for two rows ({@code q[qo..]}, {@code q[qo + d..]}; running maxima {@code m[mr]},
     * {@code m[mr + 1]}; scores to {@code st[so + c0..]} and {@code st[so + BCP + c0..]}): the tile for 16 vector
     * registers.
     */
    private static boolean fastScores2(
            float[] q, int qo, int d, float[] kt, int c0, float[] st, int so, float[] m, int mr) {
        FloatVector a00 = FloatVector.zero(SP), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
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
        }
        FloatVector t0 = FloatVector.broadcast(SP, m[mr] + LAZY);
        FloatVector t1 = FloatVector.broadcast(SP, m[mr + 1] + LAZY);
        long over = a00.compare(VectorOperators.GT, t0)
                .or(a01.compare(VectorOperators.GT, t0))
                .or(a02.compare(VectorOperators.GT, t0))
                .or(a03.compare(VectorOperators.GT, t0))
                .or(a10.compare(VectorOperators.GT, t1))
                .or(a11.compare(VectorOperators.GT, t1))
                .or(a12.compare(VectorOperators.GT, t1))
                .or(a13.compare(VectorOperators.GT, t1))
                .toLong();
        int o = so + c0;
        a00.intoArray(st, o);
        a01.intoArray(st, o + VL);
        a02.intoArray(st, o + 2 * VL);
        a03.intoArray(st, o + 3 * VL);
        a10.intoArray(st, o + BCP);
        a11.intoArray(st, o + BCP + VL);
        a12.intoArray(st, o + BCP + 2 * VL);
        a13.intoArray(st, o + BCP + 3 * VL);
        return over == 0;
    }

    /**
     * {@link #accumulate6x4} for two rows (probabilities at {@code p[po..]} and {@code p[po + BCP..]}): the tile for
     * 16 vector registers.
     */
    private static void accumulate2x4(
            float[] p, int po, float[] corr, int r, float[] v, int vo, int dv, float[] acc, int a0, int keys) {
        FloatVector x00 = FloatVector.zero(SP), x01 = x00, x02 = x00, x03 = x00;
        FloatVector x10 = x00, x11 = x00, x12 = x00, x13 = x00;
        for (int c = 0, vc = vo; c < keys; c++, vc += dv) {
            FloatVector v0 = FloatVector.fromArray(SP, v, vc);
            FloatVector v1 = FloatVector.fromArray(SP, v, vc + VL);
            FloatVector v2 = FloatVector.fromArray(SP, v, vc + 2 * VL);
            FloatVector v3 = FloatVector.fromArray(SP, v, vc + 3 * VL);
            FloatVector w = FloatVector.broadcast(SP, p[po + c]);
            x00 = w.fma(v0, x00);
            x01 = w.fma(v1, x01);
            x02 = w.fma(v2, x02);
            x03 = w.fma(v3, x03);
            w = FloatVector.broadcast(SP, p[po + BCP + c]);
            x10 = w.fma(v0, x10);
            x11 = w.fma(v1, x11);
            x12 = w.fma(v2, x12);
            x13 = w.fma(v3, x13);
        }
        FloatVector c0 = FloatVector.broadcast(SP, corr[r]);
        FloatVector.fromArray(SP, acc, a0).fma(c0, x00).intoArray(acc, a0);
        FloatVector.fromArray(SP, acc, a0 + VL).fma(c0, x01).intoArray(acc, a0 + VL);
        FloatVector.fromArray(SP, acc, a0 + 2 * VL).fma(c0, x02).intoArray(acc, a0 + 2 * VL);
        FloatVector.fromArray(SP, acc, a0 + 3 * VL).fma(c0, x03).intoArray(acc, a0 + 3 * VL);
        FloatVector c1 = FloatVector.broadcast(SP, corr[r + 1]);
        int a1 = a0 + dv;
        FloatVector.fromArray(SP, acc, a1).fma(c1, x10).intoArray(acc, a1);
        FloatVector.fromArray(SP, acc, a1 + VL).fma(c1, x11).intoArray(acc, a1 + VL);
        FloatVector.fromArray(SP, acc, a1 + 2 * VL).fma(c1, x12).intoArray(acc, a1 + 2 * VL);
        FloatVector.fromArray(SP, acc, a1 + 3 * VL).fma(c1, x13).intoArray(acc, a1 + 3 * VL);
    }

    /** {@code 2^x} in float (0 for {@code -inf}). */
    private static float exp2(float x) {
        return (float) Math.pow(2, x);
    }

    /** {@code row[o + c] = 2^(row[o + c] - max)} for {@code c < n}; returns their sum (fixed order). */
    private static float exp2Sub(float[] row, int o, int n, float max, float[] lane) {
        int c = SP.loopBound(n);
        VExp.exp2Sub(row, o, c, max, lane, 0, false);
        float sum = Lanes.sum(lane, 0);
        for (; c < n; c++) {
            float e = exp2(row[o + c] - max);
            row[o + c] = e;
            sum += e;
        }
        return sum;
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
