package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Packed, cache-blocked float32 GEMM: {@code C = alpha * op(A) . op(B)} for a batch of problems.
 *
 * <p>Structure (after BLIS): the output is cut into tasks of {@code nc} columns by a run of {@code mc}-row blocks
 * (per batch entry; the {@link Blocking}); a task walks K in steps of {@code kc}, packs its B block into {@code NR}-wide column panels once
 * per step (zero-padded) and, for each of its row blocks, reads A's rows in place or, when A is transposed or alpha is
 * not 1, packs them first (rows of the K step, alpha folded in, zero rows up to a multiple of {@link #MR}); then an
 * {@code MR x NR} register-blocked micro-kernel ({@code NR = 2} vectors; 6 rows and 12 FMA accumulators, or 4 rows and 8
 * where there are only 16 vector registers, see {@link Registers}) runs over the tiles.
 * Where several tasks would pack the same B block, the threads pack all of B once instead and the tasks share it
 * ({@link PackedB#shared}), as they share a layer's weights packed once ({@link PackedB#of}).
 * Edge tiles run the same kernel on zero padding into a scratch tile. The first K step stores a tile, later ones add to
 * it. Packing buffers are per thread and reused. Products with at most {@link Gemv#MAX_M} rows skip packing ({@link
 * Gemv}).
 *
 * <p>The task split depends on the problem and the thread count, but every element of C is computed by the same
 * sequence of FMAs whatever task or tile it falls in (edge tiles run the full kernel on zero padding; K steps are always
 * the same), so results are bitwise identical for any thread count. A batch sharing one B over contiguous A and C runs
 * as one tall product.
 */
public final class Gemm {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final int VL = SP.length();
    /**
     * Micro-tile rows: 6 (12 accumulators, 2 vectors of B and 6 broadcasts of A: 20 registers), 4 with AVX2's 16
     * (measured on Zen 5 with {@code -XX:UseAVX=2}, 1024^3, 1 thread: 53-58 GFLOP/s with 6 rows, whose accumulators
     * spilled, 103-115 with 4).
     */
    static final int MR = Registers.FEW ? 4 : 6;

    /**
     * The blocking: the K step, the rows of A and columns of B packed at once, and whether A is packed with its rows
     * interleaved ({@link #packAi}, {@link #kernel4i}, {@link #kernel6i}: one index register for the tile's broadcasts
     * instead of one row stream each) or read in place. Every blocking computes the same products within the same
     * bounds; only the K step changes the order in which a product's partial sums are added. {@link #host} is this
     * JVM's ({@link Tuning}); the tuner ({@link Tuner}) times others through the package-private entry that takes one.
     *
     * <p>The K step: transformer products (K = d_model or dim_feedforward, up to 2048) run in one step with the default
     * 2048: no partial sums stored to and reloaded from C, and long micro-kernel loops; a B micro-panel ({@code K x NR},
     * up to 256 KB) then streams from L2 rather than L1. Measured on Zen 5 (1 MB L2), 1 thread, against a 256 step: +8-12%
     * at K = 512, +8% at 1024 and 2048 (1024^3, FFN2), +15% on 2048^3; 2 threads +3-17%. Packing buffers grow to what a
     * product needs: up to {@code mc x kc} + {@code kc x nc} floats per thread.
     *
     * <p>A packed with the 4-row tile (the default there): measured on Zen 1 (AMD EPYC family 23 model 1, AVX2), 1
     * thread, thread CPU time of alternating processes: 1024^3 60.3-60.9 -> 58.1-61.2 ms, 512 x 384 . 384 x 1536 17.2 ->
     * 16.6 ms, 2048 x 1536 . 1536 x 384 69.7-71.8 -> 65.1-68.5 ms. Only where a row block serves at least {@link
     * #PACK_PANELS} column panels: on 64 x (512 x 512 . 512 x 64), four panels, packing made it slower (66.2-67.2 ->
     * 70.9-71.1 ms).
     *
     * @param kc the longest K step (at least 16)
     * @param mc rows of A per block, a multiple of {@link #MR}
     * @param nc columns of B per block, a multiple of {@link #NR}
     * @param packA whether A is packed with its rows interleaved (where a block serves enough column panels)
     */
    record Blocking(int kc, int mc, int nc, boolean packA) {
        Blocking {
            if (kc < 16
                    || mc < MR
                    || mc % MR != 0
                    || nc < NR
                    || nc % NR != 0
                    || mc > Tuning.MAX_BLOCK
                    || nc > Tuning.MAX_BLOCK
                    || kc > 4 * Tuning.MAX_BLOCK)
                throw new IllegalArgumentException("GEMM blocking K step " + kc + ", " + mc + " rows, " + nc
                        + " columns: expected K step >= 16, rows a multiple of " + MR + " and columns of " + NR
                        + ", blocks up to " + Tuning.MAX_BLOCK);
        }
    }

    /** This JVM's blocking ({@link Tuning#blocking}), resolved on the first product. */
    static Blocking host() {
        return Host.BLOCKING;
    }

    private static final class Host {
        static final Blocking BLOCKING = Tuning.blocking();
    }

    static final int PACK_PANELS = 8;
    /** Micro-tile columns: two vectors. */
    static final int NR = 2 * VL;

    static int kc(String v) {
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 16) throw new IllegalArgumentException("-Dattn.cpu.gemm.kc must be an integer >= 16, not '" + v + "'");
        return n;
    }

    /**
     * About this many tasks per thread and call: enough to balance threads; few, since every task packs its own B (on
     * one thread a single task: 16 made the encoder layer's products 13-25% slower; at 2 threads 2 per thread beat 4
     * by 2-8% on every shape measured).
     */
    private static final int TASKS_PER_THREAD = 2;
    /** Below this many multiply-adds a problem runs as a single task. */
    private static final long SERIAL_WORK = 1L << 16;

    private Gemm() {}

    /** Per-thread scratch: packed A, packed B and an edge tile. */
    private static final class Scratch {
        float[] pa = new float[0], pb = new float[0];
        final float[] tile = new float[MR * NR];
        private final int[] index = new int[VL];
        private int indexK = -1;

        private float[] plain = new float[0];

        /** At least {@code size} floats for a small product before it is stored in a heads layout. */
        float[] plain(int size) {
            if (plain.length < size) plain = new float[size];
            return plain;
        }

        private float[] shared = new float[0];

        /** At least {@code size} floats for a B packed for one call ({@link PackedB#shared}). */
        float[] shared(int size) {
            if (shared.length < size) shared = new float[size];
            return shared;
        }

        /** Packing buffers for blocks of {@code mc x kc} and {@code kc x nc}. */
        void ensure(int mc, int kc, int nc) {
            if (pa.length < mc * kc) pa = new float[mc * kc];
            if (pb.length < kc * nc) pb = new float[kc * nc];
        }

        /** {@code {0, k, 2k, ...}}: the gather map for a transposed B with row length {@code k}. */
        int[] gatherIndex(int k) {
            if (indexK != k) {
                for (int j = 0; j < VL; j++) index[j] = j * k;
                indexK = k;
            }
            return index;
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * One (batched) product. Element {@code (i, k)} of op(A) for batch {@code t} is at {@code a[aOff + t*aStride + i*K
     * + k]} ({@code [.. + k*M + i]} if {@code transA}); element {@code (k, j)} of op(B) at {@code b[bOff + t*bStride +
     * k*N + j]} ({@code [.. + j*K + k]} if {@code transB}); {@code bStride} 0 shares B. C is row-major {@code (M, N)}
     * with stride {@code cStride} between batch entries.
     */
    public static void gemm(
            Parallel par,
            int batch,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int aOff,
            int aStride,
            boolean transA,
            float[] b,
            int bOff,
            int bStride,
            boolean transB,
            float[] c,
            int cOff,
            int cStride) {
        gemm(
                par,
                batch,
                m,
                n,
                k,
                alpha,
                a,
                aOff,
                aStride,
                transA,
                b,
                bOff,
                bStride,
                transB,
                c,
                cOff,
                cStride,
                Epilogue.NONE);
    }

    /**
     * What a product does to C after its last K step, in this order: {@code bias} (null, or {@code n} values added to
     * every row), {@code pre} (null, or an array laid out like C's logical {@code (M, N)}, read at C's indices: a
     * low-rank adapter's product, added before the activation), the activation {@code act} (ReLU: {@code max(x, 0)},
     * NaN kept; GELU exact or tanh: {@link Gelu#range}), {@code residual} (null, or an array laid out like C, read at
     * C's indices) added; and with {@code heads > 0}, C's logical {@code (M, N)} rows, in runs of {@code rows} (one run
     * per batch entry), are stored split into heads: element {@code (b * rows + l, h * N/heads + d)} at {@code ((b *
     * heads + h) * rows + l) * N/heads + d}, i.e. {@code (B, L, N) -> (B, heads, L, N/heads)}, the SPLIT_HEADS layout
     * (no residual and no GELU then).
     */
    public record Epilogue(float[] bias, float[] pre, Act act, float[] residual, int heads, int rows) {
        public static final Epilogue NONE = new Epilogue(null, Act.NONE, null, 0, 0);

        /** Without a term before the activation. */
        public Epilogue(float[] bias, Act act, float[] residual, int heads, int rows) {
            this(bias, null, act, residual, heads, rows);
        }

        /** The activation after the bias. */
        public enum Act {
            NONE,
            RELU,
            GELU,
            GELU_TANH
        }

        public Epilogue {
            if (heads > 0 && residual != null) throw new IllegalArgumentException("a residual with a heads layout");
            if (heads > 0 && (act == Act.GELU || act == Act.GELU_TANH))
                throw new IllegalArgumentException("a GELU with a heads layout");
        }

        boolean values() {
            return bias != null || pre != null || act != Act.NONE || residual != null;
        }

        boolean relu() {
            return act == Act.RELU;
        }
    }

    /**
     * {@link #gemm(Parallel, int, int, int, int, float, float[], int, int, boolean, float[], int, int, boolean, float[],
     * int, int) gemm} with an {@link Epilogue}, applied to each micro-tile right after its last K step, while it is in
     * L1, with the same float operations as {@link Elementwise#addBias}, {@link Elementwise#relu} and {@link
     * Elementwise#add} (and a plain copy for the heads layout), so the result is bitwise what the separate ops give.
     * The heads layout needs {@code batch == 1} (fold a shared-B batch into M first) and no {@code transA}.
     */
    public static void gemm(
            Parallel par,
            int batch,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int aOff,
            int aStride,
            boolean transA,
            float[] b,
            int bOff,
            int bStride,
            boolean transB,
            float[] c,
            int cOff,
            int cStride,
            Epilogue e) {
        gemm(par, batch, m, n, k, alpha, a, aOff, aStride, transA, b, bOff, bStride, transB, c, cOff, cStride, e, null);
    }

    /**
     * {@link #gemm(Parallel, int, int, int, int, float, float[], int, int, boolean, float[], int, int, boolean, float[],
     * int, int, Epilogue) gemm} with B already packed ({@link PackedB#of}, for a B shared by the batch: a layer's
     * weights); null packs B per task as usual. The packed panels are the ones a task would pack, so results are
     * bitwise the same.
     */
    public static void gemm(
            Parallel par,
            int batch,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int aOff,
            int aStride,
            boolean transA,
            float[] b,
            int bOff,
            int bStride,
            boolean transB,
            float[] c,
            int cOff,
            int cStride,
            Epilogue e,
            PackedB packed) {
        gemm(
                host(), par, batch, m, n, k, alpha, a, aOff, aStride, transA, b, bOff, bStride, transB, c, cOff,
                cStride, e, packed);
    }

    /** {@link #gemm(Parallel, int, int, int, int, float, float[], int, int, boolean, float[], int, int, boolean, float[],
     * int, int, Epilogue, PackedB) gemm} with the blocking {@code bl} (the tuner's; a {@code packed} B must have been
     * packed with its K step). */
    static void gemm(
            Blocking bl,
            Parallel par,
            int batch,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int aOff,
            int aStride,
            boolean transA,
            float[] b,
            int bOff,
            int bStride,
            boolean transB,
            float[] c,
            int cOff,
            int cStride,
            Epilogue e,
            PackedB packed) {
        if (batch <= 0 || m <= 0 || n <= 0) return;
        if (e.heads() > 0 && (batch != 1 || transA || n % e.heads() != 0 || m % e.rows() != 0))
            throw new IllegalArgumentException("heads layout: batch 1, no transA, N and M divisible by heads and rows");
        if (e.heads() > 0 && (k <= 0 || m <= Gemv.MAX_M)) { // small or empty: the plain product, then the layout
            float[] plain = SCRATCH.get().plain(m * n); // the calling thread's: a decoding step comes here per token
            // with B as given (a packed B read packed: the FMA order of the product without the heads layout)
            gemm(bl, par, 1, m, n, k, alpha, a, aOff, 0, false, b, bOff, 0, transB, plain, 0, 0, Epilogue.NONE, packed);
            scatter(plain, n, m, n, c, cOff, n, 0, 0, true, true, e);
            return;
        }
        if (k <= 0) {
            for (int t = 0; t < batch; t++) {
                java.util.Arrays.fill(c, cOff + t * cStride, cOff + t * cStride + m * n, 0f);
                if (e.values()) epilogue(c, cOff + t * cStride, n, m, n, 0, e);
            }
            return;
        }
        if (m <= Gemv.MAX_M && !transA && batch == 1 && packed == null) { // a packed B is read packed, even by 1 row
            Gemv.run(par, m, n, k, alpha, a, aOff, b, bOff, transB, c, cOff);
            if (e.values()) epilogue(c, cOff, n, m, n, 0, e);
            return;
        }
        if (batch > 1 && bStride == 0 && !transA && aStride == m * k && cStride == m * n) {
            // a shared B over contiguous A and C entries (a Linear over (B, L, E)) is one tall product: B is packed
            // once per task, not once per entry. Every element sees the same FMA sequence either way.
            gemm(bl, par, 1, batch * m, n, k, alpha, a, aOff, 0, false, b, bOff, 0, transB, c, cOff, 0, e, packed);
            return;
        }
        PackedB pk = packed != null && (batch == 1 || bStride == 0) && packed.fits(b, bOff, n, k, transB, bl.kc)
                ? packed
                : null;
        int target = par.threads() == 1 ? 1 : TASKS_PER_THREAD * par.threads();
        int mBlocks = (m + bl.mc - 1) / bl.mc;
        boolean serial = (long) batch * m * n * k <= SERIAL_WORK;
        int colw = columnBlock(batch, mBlocks, n, bl.nc, par.threads(), target, pk != null, bl.packA);
        int nBlocks = (n + colw - 1) / colw;
        // A task is one batch entry, one NC column block and a chunk of consecutive MC row blocks: B is packed once
        // per task and K step and reused by every row block of the chunk. Chunks are as long as they can be while
        // still giving about `target` tasks (more tasks balance threads, longer chunks pack B less often); their
        // lengths differ by one MR-row tile at most (see task: whole blocks made 512 rows 96, 192, 96 and 128).
        int chunks = chunks(batch, mBlocks, nBlocks, target);
        if (pk == null && batch == 1 && chunks > 1 && !serial && (long) PackedB.padded(n) * k <= SHARED_B_MAX) {
            // several tasks would each pack the same B block: the threads pack all of B once, together, then every
            // task reads its panels (the layout of weights packed once, so results are bitwise the same)
            pk = PackedB.shared(par, b, bOff, n, k, transB, bl.kc);
            colw = columnBlock(batch, mBlocks, n, bl.nc, par.threads(), target, true, bl.packA);
            nBlocks = (n + colw - 1) / colw;
            chunks = chunks(batch, mBlocks, nBlocks, target);
        }
        int perBatch = chunks * nBlocks;
        int tasks = batch * perBatch;
        int fColw = colw, fnBlocks = nBlocks, fChunks = chunks;
        PackedB fpk = pk;
        java.util.function.IntConsumer body = t -> task(
                bl, t, perBatch, fnBlocks, fColw, fChunks, m, n, k, alpha, a, aOff, aStride, transA, b, bOff, bStride,
                transB, c, cOff, cStride, e, fpk);
        if (serial) for (int t = 0; t < tasks; t++) body.accept(t);
        else par.forEach(tasks, body);
    }

    /** Row-block chunks per column block: as few as still give about {@code target} tasks. */
    private static int chunks(int batch, int mBlocks, int nBlocks, int target) {
        return (int) Math.min(mBlocks, Math.max(1, (target + (long) batch * nBlocks - 1) / ((long) batch * nBlocks)));
    }

    /**
     * Most floats of a K step's B block ({@code kc x nc}, 256 KB: in L2) for which a row block runs row tile by row
     * tile, each across all the block's column panels, instead of panel by panel down the rows. The rule is the block's
     * size, not K's: a short K step (attention's QK^T: K = 64) or a narrow block (the PV shape's N = 64; the narrow
     * column blocks of few-row products). With a short K step a tile's stores are large next to its FMAs, and panel
     * order writes C a 2-line piece per row, 96 rows apart, that each misses on its own; row order writes each row of C
     * in sequence, which the hardware prefetcher streams, and reads the block's B panels again per row tile from L2.
     * Measured on Zen 4 (family 25 model 17), 64 x (512x64 . 64x512^T) into an output allocated once, alternating
     * processes: 1 thread medians 28.2-37.8 -> 24.6-31.8 ms, 2 threads 14.9-16.3 -> 12.6-13.9 ms; PV (row order too:
     * 512 x 64 = 32K floats) 24.1-26.4 -> 24.4-26.1, and in row order for every block size the Linear shapes did not
     * move. Every element gets the same FMA sequence either way.
     */
    static final int ROWS_OUTER_MAX = 1 << 16;

    /**
     * Most floats of a B packed for one call and shared by its tasks ({@link PackedB#shared}): 16 MB, held by the
     * calling thread for its next calls. Larger products pack B per task as before.
     */
    static final int SHARED_B_MAX = 1 << 22;

    /**
     * The width of a task's column block: {@code nc}, or narrower (in NR steps) when the row blocks give fewer than
     * {@code target} tasks. With B packed once, splitting columns costs nothing (a batch of short texts: 72 x 384 . 384
     * x 384 is two row blocks, 64 and 8 rows). Without packed B, each task packs the B columns it uses (narrower blocks
     * pack no more of B in all), but a packed A block is packed once per column block: there they narrow only where
     * some threads would have no task (1024^3 on 16 threads with 192-row and 1024-column blocks: 6 tasks), and not below
     * the {@link #PACK_PANELS} panels at which A is packed (read in place, A ran 1.5x slower on the Xeon).
     */
    static int columnBlock(
            int batch, int mBlocks, int n, int nc, int threads, int target, boolean packedB, boolean packsA) {
        long rows = (long) batch * mBlocks, rowTasks = rows * ((n + nc - 1) / nc);
        if (packedB && rowTasks >= target && rowTasks < 2L * target && rowTasks % threads != 0) {
            // a few tasks that do not share out evenly (ModernBERT-base's 768 x 2304 products of a short text: 512,
            // 512, 512, 512 and 256 columns on 2 threads, one thread doing 1280 of them): with B packed, columns
            // split for free, so into the fewest equal parts that make the task count a multiple of the threads
            long parts = (n + nc - 1) / nc;
            while ((rows * parts) % threads != 0 && parts < (n + NR - 1) / NR) parts++;
            return (int) Math.min(nc, ((n + parts - 1) / parts + NR - 1) / NR * NR);
        }
        if (rowTasks >= target || (!packedB && rowTasks >= threads)) return nc;
        long parts = Math.min((n + NR - 1) / NR, (target + rows - 1) / rows);
        if (!packedB && packsA) parts = Math.max(1, Math.min(parts, n / (PACK_PANELS * NR)));
        return (int) Math.min(nc, ((n + parts - 1) / parts + NR - 1) / NR * NR);
    }

    private static void task(
            Blocking bl,
            int t,
            int perBatch,
            int nBlocks,
            int colw,
            int chunks,
            int m,
            int n,
            int k,
            float alpha,
            float[] a,
            int aOff,
            int aStride,
            boolean transA,
            float[] b,
            int bOff,
            int bStride,
            boolean transB,
            float[] c,
            int cOff,
            int cStride,
            Epilogue e,
            PackedB packed) {
        int bt = t / perBatch, r = t % perBatch;
        int chunk = r / nBlocks, j0 = (r % nBlocks) * colw;
        // the chunk's rows: an equal share of the MR-row tiles (not of the MC blocks: 512 rows in 96-row blocks and 4
        // chunks were 96, 192, 96 and 128 rows, and the thread with the 192 finished last), then MC blocks inside it
        int mTiles = (m + MR - 1) / MR;
        int iStart = (int) ((long) chunk * mTiles / chunks) * MR;
        int iEnd = Math.min(m, (int) ((long) (chunk + 1) * mTiles / chunks) * MR);
        int nc = Math.min(colw, n - j0);
        int ao = aOff + bt * aStride, bo = bOff + bt * bStride, co = cOff + bt * cStride;
        Scratch s = SCRATCH.get();
        int kcMax = bl.kc, mcMax = bl.mc;
        s.ensure(mcMax, Math.min(kcMax, k), bl.nc);
        // A is packed only when it must be transposed or scaled; otherwise the kernel reads its rows in place, which
        // measured 8-10% faster on the encoder's products and 50% on few-column ones (64 x 512 . 512 x 64), where a
        // packed A block served only two column panels. The FMA sequence per element is the same either way.
        // with the 4-row tile (and the 6-row one where the CPU's table entry says so), A is packed with its rows
        // interleaved where a block serves enough column panels
        boolean inter = bl.packA && nc >= PACK_PANELS * NR;
        boolean direct = !transA && alpha == 1f && !inter;
        for (int p0 = 0; p0 < k; p0 += kcMax) {
            int kc = Math.min(kcMax, k - p0);
            float[] pb = s.pb;
            int pb0 = 0;
            if (packed != null) { // this K step's panels of the block, packed once for every call
                pb = packed.panels;
                pb0 = packed.offset(p0, j0);
            } else packB(b, bo, transB, n, k, p0, kc, j0, nc, s.pb, 0, s);
            boolean first = p0 == 0, last = p0 + kc >= k;
            boolean epilogue = last && e.values(), heads = e.heads() > 0;
            for (int i0 = iStart; i0 < iEnd; i0 += mcMax) {
                int mc = Math.min(mcMax, iEnd - i0);
                if (inter) packAi(a, ao, transA, m, k, i0, mc, p0, kc, alpha, s.pa);
                else if (!direct) packA(a, ao, transA, m, k, i0, mc, p0, kc, alpha, s.pa);
                else if (mc % MR != 0) {
                    // A read in place: its last, short row tile packed (zero-padded) here, once per block and K
                    // step, not once per column panel (that was 3-20% of products of 8-32 rows, one text's)
                    packA(a, ao, false, m, k, i0 + mc / MR * MR, mc % MR, p0, kc, alpha, s.pa);
                }
                // column panels outside, row tiles inside (each panel's B read from L1 by the block's row tiles);
                // for a B block of at most ROWS_OUTER_MAX floats the other way round (see there)
                boolean rowsOuter = (long) kc * nc <= ROWS_OUTER_MAX;
                int rowTiles = (mc + MR - 1) / MR, panels = (nc + NR - 1) / NR;
                for (int outer = 0; outer < (rowsOuter ? rowTiles : panels); outer++) {
                    for (int inner = 0; inner < (rowsOuter ? panels : rowTiles); inner++) {
                        int ip = (rowsOuter ? outer : inner) * MR, jp = (rowsOuter ? inner : outer) * NR;
                        int nr = Math.min(NR, nc - jp);
                        int pbi = pb0 + (jp / NR) * kc * NR;
                        int mr = Math.min(MR, mc - ip);
                        // the tile's MR rows of A: packed rows of kc, or A's own rows, or (the last, short row tile
                        // of an unpacked A) packed above, zero-padded
                        float[] at = s.pa;
                        int ar = ip * kc, lda = kc;
                        if (direct && mr == MR) {
                            at = a;
                            ar = ao + (i0 + ip) * k + p0;
                            lda = k;
                        } else if (direct) ar = 0;
                        if (heads) { // the tile in scratch, then stored in the heads layout
                            edgeKernel(inter, mr, kc, at, ar, lda, pb, pbi, s.tile);
                            scatter(s.tile, NR, mr, nr, c, co, n, i0 + ip, j0 + jp, first, last, e);
                            continue;
                        }
                        int ci = co + (i0 + ip) * n + j0 + jp;
                        if (mr == MR && nr == NR) kernel(inter, kc, at, ar, lda, pb, pbi, c, ci, n, first);
                        else { // an edge tile into scratch (its rows past mr zero padding), then the valid part
                            edgeKernel(inter, mr, kc, at, ar, lda, pb, pbi, s.tile);
                            storeTile(s.tile, c, ci, n, first, mr, nr);
                        }
                        if (epilogue) epilogue(c, ci, n, mr, nr, j0 + jp, e);
                    }
                }
            }
        }
    }

    /**
     * {@code c[o] = act(c[o] + bias[col + j] + pre[o]) + residual[o]} with {@code o = ci + r*ldc + j}, for {@code r <
     * rows, j < cols}: the bias add of {@link Elementwise#addBias} (skipped when {@code bias} is null), the add of
     * {@link Elementwise#add} (skipped when {@code pre} is null), the ReLU of {@link
     * Elementwise#relu} or the GELU of {@link Gelu#range}, the add of {@link Elementwise#add} (skipped when {@code
     * residual} is null). A few rows at a time (at least 256 values: a GEMM tile's 6 rows, or one row of a whole
     * matrix): bias, then the rows' GELU in one loop ({@link Gelu#tile}: the exact form's long dependency chain needs
     * several vectors in flight), then the residual, while the rows are still in L1. Per element always the same
     * operations in the same order.
     */
    static void epilogue(float[] c, int ci, int ldc, int rows, int cols, int col, Epilogue e) {
        float[] bias = e.bias(), pre = e.pre(), residual = e.residual();
        boolean relu = e.relu(), gelu = e.act() == Epilogue.Act.GELU || e.act() == Epilogue.Act.GELU_TANH;
        float[] res = gelu ? null : residual; // with a GELU the residual comes after it, below
        int step = Math.max(1, 256 / Math.max(1, cols));
        for (int r0 = 0; r0 < rows; r0 += step) {
            int r1 = Math.min(rows, r0 + step);
            for (int r = r0; r < r1; r++) {
                int o = ci + r * ldc, j = 0;
                for (int ub = SP.loopBound(cols); j < ub; j += VL) {
                    FloatVector x = FloatVector.fromArray(SP, c, o + j);
                    if (bias != null) x = x.add(FloatVector.fromArray(SP, bias, col + j));
                    if (pre != null) x = x.add(FloatVector.fromArray(SP, pre, o + j));
                    if (relu) x = x.blend(0f, x.compare(VectorOperators.LT, 0f));
                    if (res != null) x = x.add(FloatVector.fromArray(SP, res, o + j));
                    x.intoArray(c, o + j);
                }
                for (; j < cols; j++) {
                    float x = c[o + j];
                    if (bias != null) x = x + bias[col + j];
                    if (pre != null) x = x + pre[o + j];
                    if (relu) x = x < 0f ? 0f : x;
                    if (res != null) x = x + res[o + j];
                    c[o + j] = x;
                }
            }
            if (!gelu) continue;
            Gelu.tile(c, ci + r0 * ldc, ldc, r1 - r0, cols, e.act() == Epilogue.Act.GELU_TANH);
            if (residual != null)
                for (int r = r0; r < r1; r++) {
                    int o = ci + r * ldc, j = 0;
                    for (int ub = SP.loopBound(cols); j < ub; j += VL)
                        FloatVector.fromArray(SP, c, o + j)
                                .add(FloatVector.fromArray(SP, residual, o + j))
                                .intoArray(c, o + j);
                    for (; j < cols; j++) c[o + j] = c[o + j] + residual[o + j];
                }
        }
    }

    /**
     * Stores a tile ({@code rows x cols} at {@code tile[r * ldt + j]}, the product's rows {@code row0..} and columns
     * {@code col0..}) into C in the heads layout of {@code e}: stored on the first K step, added to what is there
     * (as {@link #storeTile} does) on later ones, with bias and ReLU on the last, as {@link #epilogue} applies them.
     */
    static void scatter(
            float[] tile,
            int ldt,
            int rows,
            int cols,
            float[] c,
            int co,
            int n,
            int row0,
            int col0,
            boolean first,
            boolean last,
            Epilogue e) {
        int heads = e.heads(), len = e.rows(), d = n / heads;
        float[] bias = last ? e.bias() : null, pre = last ? e.pre() : null;
        boolean relu = last && e.relu();
        // divisions once per call, not per row and run (they cost more than a 32-float run's copy)
        int h0 = col0 / d, dd0 = col0 % d, bb = row0 / len, l = row0 % len;
        for (int r = 0; r < rows; r++, l++) {
            if (l == len) {
                l = 0;
                bb++;
            }
            // the runs of this row: from column col0 (head h0, offset dd0) to the end of each head
            for (int j = 0, h = h0, dd = dd0; j < cols; h++, dd = 0) {
                int col = col0 + j, run = Math.min(cols - j, d - dd);
                int dst = co + ((bb * heads + h) * len + l) * d + dd, src = r * ldt + j, t = 0;
                int po = co + (row0 + r) * n + col; // pre's element, at C's logical index
                for (int ub = SP.loopBound(run); t < ub; t += VL) {
                    FloatVector x = FloatVector.fromArray(SP, tile, src + t);
                    if (!first) x = x.add(FloatVector.fromArray(SP, c, dst + t));
                    if (bias != null) x = x.add(FloatVector.fromArray(SP, bias, col + t));
                    if (pre != null) x = x.add(FloatVector.fromArray(SP, pre, po + t));
                    if (relu) x = x.blend(0f, x.compare(VectorOperators.LT, 0f));
                    x.intoArray(c, dst + t);
                }
                for (; t < run; t++) {
                    float x = first ? tile[src + t] : tile[src + t] + c[dst + t];
                    if (bias != null) x = x + bias[col + t];
                    if (pre != null) x = x + pre[po + t];
                    if (relu) x = x < 0f ? 0f : x;
                    c[dst + t] = x;
                }
                j += run;
            }
        }
    }

    /**
     * Packs rows {@code [i0, i0+mc)} x {@code [p0, p0+kc)} of op(A), times alpha, as rows of {@code kc}: row {@code r}
     * at {@code pa[r * kc + kk]}, rows up to the next multiple of {@link #MR} zero (packing absorbs the transpose).
     */
    private static void packA(
            float[] a, int ao, boolean transA, int m, int k, int i0, int mc, int p0, int kc, float alpha, float[] pa) {
        int rows = (mc + MR - 1) / MR * MR;
        for (int r = 0; r < rows; r++) {
            int d = r * kc, row = i0 + r;
            if (r >= mc) java.util.Arrays.fill(pa, d, d + kc, 0f);
            else if (!transA) {
                int src = ao + row * k + p0;
                for (int kk = 0; kk < kc; kk++) pa[d + kk] = alpha * a[src + kk];
            } else {
                int src = ao + p0 * m + row;
                for (int kk = 0; kk < kc; kk++) pa[d + kk] = alpha * a[src + kk * m];
            }
        }
    }

    /**
     * Packs rows {@code [i0, i0+mc)} x {@code [p0, p0+kc)} of op(A), times alpha, in {@link #MR}-row micro-panels with
     * the rows interleaved: row {@code ip + r} at {@code pa[ip * kc + kk * MR + r]}, rows past {@code mc} zero ({@link
     * #kernel4i}, {@link #kernel6i}).
     */
    private static void packAi(
            float[] a, int ao, boolean transA, int m, int k, int i0, int mc, int p0, int kc, float alpha, float[] pa) {
        for (int ip = 0; ip < mc; ip += MR) {
            int base = ip * kc;
            for (int r = 0; r < MR; r++) {
                int row = i0 + ip + r, d = base + r;
                if (ip + r >= mc) for (int kk = 0; kk < kc; kk++) pa[d + MR * kk] = 0f;
                else if (!transA) {
                    int src = ao + row * k + p0;
                    for (int kk = 0; kk < kc; kk++) pa[d + MR * kk] = alpha * a[src + kk];
                } else {
                    int src = ao + p0 * m + row;
                    for (int kk = 0; kk < kc; kk++) pa[d + MR * kk] = alpha * a[src + kk * m];
                }
            }
        }
    }

    /**
     * Packs {@code [p0, p0+kc)} x columns {@code [j0, j0+nc)} of op(B) into NR-wide panels, {@code k}-major inside, at
     * {@code pb[dst0..]}.
     */
    private static void packB(
            float[] b,
            int bo,
            boolean transB,
            int n,
            int k,
            int p0,
            int kc,
            int j0,
            int nc,
            float[] pb,
            int dst0,
            Scratch s) {
        int dst = dst0;
        for (int jp = 0; jp < nc; jp += NR) {
            int nr = Math.min(NR, nc - jp);
            if (!transB) {
                for (int kk = 0; kk < kc; kk++) {
                    int src = bo + (p0 + kk) * n + j0 + jp;
                    int d = dst + kk * NR;
                    if (nr == NR) {
                        FloatVector.fromArray(SP, b, src).intoArray(pb, d);
                        FloatVector.fromArray(SP, b, src + VL).intoArray(pb, d + VL);
                    } else {
                        System.arraycopy(b, src, pb, d, nr);
                        for (int j = nr; j < NR; j++) pb[d + j] = 0f;
                    }
                }
            } else if (nr == NR && Transpose.AVAILABLE && NR % 16 == 0 && kc % 16 == 0) {
                // 16 x 16 blocks transposed in registers (gathers are slow on AMD cores)
                int src = bo + (j0 + jp) * k + p0;
                for (int kk0 = 0; kk0 < kc; kk0 += 16)
                    for (int h = 0; h < NR; h += 16)
                        Transpose.block16(b, src + h * k + kk0, k, pb, dst + kk0 * NR + h, NR, 1f);
            } else if (nr == NR) {
                // gather NR strided elements per k: two vector gathers through a (j * k) index map
                int[] idx = s.gatherIndex(k);
                int src = bo + (j0 + jp) * k + p0, src1 = src + VL * k;
                for (int kk = 0; kk < kc; kk++) {
                    int d = dst + kk * NR;
                    FloatVector.fromArray(SP, b, src + kk, idx, 0).intoArray(pb, d);
                    FloatVector.fromArray(SP, b, src1 + kk, idx, 0).intoArray(pb, d + VL);
                }
            } else {
                for (int j = 0; j < NR; j++) {
                    if (j < nr) {
                        int src = bo + (j0 + jp + j) * k + p0;
                        for (int kk = 0; kk < kc; kk++) pb[dst + kk * NR + j] = b[src + kk];
                    } else {
                        for (int kk = 0; kk < kc; kk++) pb[dst + kk * NR + j] = 0f;
                    }
                }
            }
            dst += kc * NR;
        }
    }

    /**
     * A shared B (a layer's weights) packed once into the panels every task would pack: for each K step, the NR-wide
     * column panels of all of N (zero-padded to a multiple of NR), {@code k}-major inside. The product's tasks then read
     * their panels instead of packing them, which removes the packing from every call (most of the cost beyond the FMAs
     * for products with few rows) and lets threads share one copy. Found again by the identity of B's array ({@link
     * #of}), so a model's weights are packed on their first product and kept as long as the array lives. Immutable.
     */
    public static final class PackedB {
        private static final java.util.Map<float[], PackedB> CACHE =
                java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

        private final java.lang.ref.WeakReference<float[]> of;
        private final int bOff, n, k, npad, kc;
        private final boolean transB;
        final float[] panels;

        private PackedB(float[] b, int bOff, int n, int k, boolean transB, int kc) {
            this(b, bOff, n, k, transB, kc, new float[Math.multiplyExact(padded(n), k)]);
            pack(b, 0, npad, SCRATCH.get());
        }

        /** Packs the panels of columns {@code [j0, j1)} (whole panels: multiples of NR, or N), every K step. */
        private void pack(float[] b, int j0, int j1, Scratch s) {
            for (int p0 = 0; p0 < k; p0 += kc)
                packB(
                        b,
                        bOff,
                        transB,
                        n,
                        k,
                        p0,
                        Math.min(kc, k - p0),
                        j0,
                        Math.min(j1, n) - j0,
                        panels,
                        offset(p0, j0),
                        s);
        }

        /** Unpacked panels in {@code panels} (at least {@code padded(n) * k} floats). */
        private PackedB(float[] b, int bOff, int n, int k, boolean transB, int kc, float[] panels) {
            this.of = new java.lang.ref.WeakReference<>(b);
            this.bOff = bOff;
            this.n = n;
            this.k = k;
            this.transB = transB;
            this.kc = kc;
            this.npad = padded(n);
            this.panels = panels;
        }

        /** N rounded up to whole panels. */
        static int padded(int n) {
            return (n + NR - 1) / NR * NR;
        }

        /**
         * B packed for one call, by the pool's threads together (each a run of whole panels, every K step), into the
         * calling thread's scratch: valid until that thread's next product. Not cached.
         */
        static PackedB shared(Parallel par, float[] b, int bOff, int n, int k, boolean transB, int kc) {
            PackedB p = new PackedB(b, bOff, n, k, transB, kc, SCRATCH.get().shared(padded(n) * k));
            int panels = p.npad / NR, parts = Math.min(panels, TASKS_PER_THREAD * par.threads());
            par.forEach(
                    parts,
                    t -> p.pack(
                            b,
                            (int) ((long) t * panels / parts) * NR,
                            (int) ((long) (t + 1) * panels / parts) * NR,
                            SCRATCH.get()));
            return p;
        }

        /**
         * B's packed panels, from the cache or packed now (once per array: concurrent first calls wait for one packing).
         */
        public static PackedB of(float[] b, int bOff, int n, int k, boolean transB) {
            int kc = host().kc;
            PackedB p = CACHE.get(b);
            if (p != null && p.fits(b, bOff, n, k, transB, kc)) return p;
            synchronized (CACHE) {
                p = CACHE.get(b);
                if (p == null || !p.fits(b, bOff, n, k, transB, kc)) {
                    p = new PackedB(b, bOff, n, k, transB, kc);
                    CACHE.put(b, p);
                }
                return p;
            }
        }

        boolean fits(float[] b, int bOff, int n, int k, boolean transB, int kc) {
            return of.get() == b
                    && this.bOff == bOff
                    && this.n == n
                    && this.k == k
                    && this.transB == transB
                    && this.kc == kc;
        }

        /** Where the panels of K step {@code p0} for the column block from {@code j0} start. */
        int offset(int p0, int j0) {
            return p0 * npad + (j0 / NR) * Math.min(kc, k - p0) * NR;
        }
    }

    /** The valid {@code mr x nr} part of a scratch tile stored to C ({@code first}), or added to it, as the kernel does. */
    private static void storeTile(float[] tile, float[] c, int ci, int ldc, boolean first, int mr, int nr) {
        for (int r = 0; r < mr; r++)
            for (int j = 0; j < nr; j++) {
                float v = tile[r * NR + j];
                int o = ci + r * ldc + j;
                c[o] = first ? v : v + c[o];
            }
    }

    /**
     * The MR x NR micro-kernel on a full tile of C (row stride {@code ldc}): row {@code r} of A at {@code a[ar + r * lda
     * + kk]} (A's own rows, or packed ones), B from a packed panel; the first K step stores the tile, later ones add.
     */
    private static void kernel(
            boolean interleaved,
            int kc,
            float[] a,
            int ar,
            int lda,
            float[] pb,
            int pbi,
            float[] c,
            int ci,
            int ldc,
            boolean first) {
        if (interleaved && MR == 6) {
            kernel6i(kc, a, ar, pb, pbi, c, ci, ldc, first);
            return;
        }
        if (interleaved) {
            kernel4i(kc, a, ar, pb, pbi, c, ci, ldc, first);
            return;
        }
        if (MR == 4) {
            kernel4(kc, a, ar, lda, pb, pbi, c, ci, ldc, first);
            return;
        }
        kernel6(kc, a, ar, lda, pb, pbi, c, ci, ldc, first);
    }

    /**
     * A tile of {@code mr} rows into {@code tile} (row stride NR, stored): with the 6-row tile, one of 4 rows or fewer
     * (A not interleaved) takes the 4-row kernel (8 accumulators), two thirds of the work of 6 rows on zero padding:
     * 1.05-1.19x on products of 8-33 rows (a text's). Every element gets the same FMA sequence either way. A 3-row
     * kernel (6 accumulators) measured 0.87-0.96x: its chains leave the FMA latency exposed.
     */
    private static void edgeKernel(
            boolean inter, int mr, int kc, float[] a, int ar, int lda, float[] pb, int pbi, float[] tile) {
        if (!inter && mr <= 4 && MR == 6) kernel4(kc, a, ar, lda, pb, pbi, tile, 0, NR, true);
        else kernel(inter, kc, a, ar, lda, pb, pbi, tile, 0, NR, true);
    }

    /**
     * {@link #kernel} with 6 rows (12 accumulators) on A's rows in place: the tile for 32 vector registers. Also the
     * int8 product's panel kernel ({@link QMatMul}: widened weights, exact float sums into a tile).
     */
    static void kernel6(
            int kc, float[] a, int ar, int lda, float[] pb, int pbi, float[] c, int ci, int ldc, boolean first) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        int a0 = ar, a1 = ar + lda, a2 = ar + 2 * lda, a3 = ar + 3 * lda, a4 = ar + 4 * lda, a5 = ar + 5 * lda;
        for (int kk = 0; kk < kc; kk++) {
            FloatVector b0 = FloatVector.fromArray(SP, pb, pbi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, pbi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[a0 + kk]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[a1 + kk]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[a2 + kk]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[a3 + kk]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[a4 + kk]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[a5 + kk]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
            pbi += NR;
        }
        // stores written out in place: passing vectors to a helper that C2 declines to inline would box them
        if (first) {
            c00.intoArray(c, ci);
            c01.intoArray(c, ci + VL);
            c10.intoArray(c, ci + ldc);
            c11.intoArray(c, ci + ldc + VL);
            c20.intoArray(c, ci + 2 * ldc);
            c21.intoArray(c, ci + 2 * ldc + VL);
            c30.intoArray(c, ci + 3 * ldc);
            c31.intoArray(c, ci + 3 * ldc + VL);
            c40.intoArray(c, ci + 4 * ldc);
            c41.intoArray(c, ci + 4 * ldc + VL);
            c50.intoArray(c, ci + 5 * ldc);
            c51.intoArray(c, ci + 5 * ldc + VL);
        } else {
            c00.add(FloatVector.fromArray(SP, c, ci)).intoArray(c, ci);
            c01.add(FloatVector.fromArray(SP, c, ci + VL)).intoArray(c, ci + VL);
            c10.add(FloatVector.fromArray(SP, c, ci + ldc)).intoArray(c, ci + ldc);
            c11.add(FloatVector.fromArray(SP, c, ci + ldc + VL)).intoArray(c, ci + ldc + VL);
            c20.add(FloatVector.fromArray(SP, c, ci + 2 * ldc)).intoArray(c, ci + 2 * ldc);
            c21.add(FloatVector.fromArray(SP, c, ci + 2 * ldc + VL)).intoArray(c, ci + 2 * ldc + VL);
            c30.add(FloatVector.fromArray(SP, c, ci + 3 * ldc)).intoArray(c, ci + 3 * ldc);
            c31.add(FloatVector.fromArray(SP, c, ci + 3 * ldc + VL)).intoArray(c, ci + 3 * ldc + VL);
            c40.add(FloatVector.fromArray(SP, c, ci + 4 * ldc)).intoArray(c, ci + 4 * ldc);
            c41.add(FloatVector.fromArray(SP, c, ci + 4 * ldc + VL)).intoArray(c, ci + 4 * ldc + VL);
            c50.add(FloatVector.fromArray(SP, c, ci + 5 * ldc)).intoArray(c, ci + 5 * ldc);
            c51.add(FloatVector.fromArray(SP, c, ci + 5 * ldc + VL)).intoArray(c, ci + 5 * ldc + VL);
        }
    }

    /**
     * {@link #kernel4} on A packed by {@link #packA4}: the tile's 4 rows interleaved, {@code a[ar + kk * 4 + r]}, so that
     * the four broadcasts of a step share one index register (on AVX2's 16 general registers, C2 kept the loop bound
     * and B's offset on the stack with four row streams).
     */
    private static void kernel4i(
            int kc, float[] a, int ar, float[] pb, int pbi, float[] c, int ci, int ldc, boolean first) {
        if (MR != 4) throw new IllegalStateException("the interleaved A is for the 4-row tile");
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00;
        FloatVector c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        for (int kk = 0; kk < kc; kk++) {
            int ai = ar + 4 * kk, bi = pbi + NR * kk;
            FloatVector b0 = FloatVector.fromArray(SP, pb, bi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, bi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[ai]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[ai + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[ai + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[ai + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
        }
        if (first) {
            c00.intoArray(c, ci);
            c01.intoArray(c, ci + VL);
            c10.intoArray(c, ci + ldc);
            c11.intoArray(c, ci + ldc + VL);
            c20.intoArray(c, ci + 2 * ldc);
            c21.intoArray(c, ci + 2 * ldc + VL);
            c30.intoArray(c, ci + 3 * ldc);
            c31.intoArray(c, ci + 3 * ldc + VL);
        } else {
            c00.add(FloatVector.fromArray(SP, c, ci)).intoArray(c, ci);
            c01.add(FloatVector.fromArray(SP, c, ci + VL)).intoArray(c, ci + VL);
            c10.add(FloatVector.fromArray(SP, c, ci + ldc)).intoArray(c, ci + ldc);
            c11.add(FloatVector.fromArray(SP, c, ci + ldc + VL)).intoArray(c, ci + ldc + VL);
            c20.add(FloatVector.fromArray(SP, c, ci + 2 * ldc)).intoArray(c, ci + 2 * ldc);
            c21.add(FloatVector.fromArray(SP, c, ci + 2 * ldc + VL)).intoArray(c, ci + 2 * ldc + VL);
            c30.add(FloatVector.fromArray(SP, c, ci + 3 * ldc)).intoArray(c, ci + 3 * ldc);
            c31.add(FloatVector.fromArray(SP, c, ci + 3 * ldc + VL)).intoArray(c, ci + 3 * ldc + VL);
        }
    }

    /**
     * The 6-row {@link #kernel} on A packed by {@link #packAi}: the tile's 6 rows interleaved, {@code a[ar + kk * 6 +
     * r]} (one index for the six broadcasts). Same FMA sequence per element as the in-place kernel.
     */
    private static void kernel6i(
            int kc, float[] a, int ar, float[] pb, int pbi, float[] c, int ci, int ldc, boolean first) {
        if (MR != 6) throw new IllegalStateException("the 6-row interleaved A is for the 6-row tile");
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        for (int kk = 0; kk < kc; kk++) {
            int ai = ar + 6 * kk, bi = pbi + NR * kk;
            FloatVector b0 = FloatVector.fromArray(SP, pb, bi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, bi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[ai]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[ai + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[ai + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[ai + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[ai + 4]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[ai + 5]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
        }
        if (first) {
            c00.intoArray(c, ci);
            c01.intoArray(c, ci + VL);
            c10.intoArray(c, ci + ldc);
            c11.intoArray(c, ci + ldc + VL);
            c20.intoArray(c, ci + 2 * ldc);
            c21.intoArray(c, ci + 2 * ldc + VL);
            c30.intoArray(c, ci + 3 * ldc);
            c31.intoArray(c, ci + 3 * ldc + VL);
            c40.intoArray(c, ci + 4 * ldc);
            c41.intoArray(c, ci + 4 * ldc + VL);
            c50.intoArray(c, ci + 5 * ldc);
            c51.intoArray(c, ci + 5 * ldc + VL);
        } else {
            c00.add(FloatVector.fromArray(SP, c, ci)).intoArray(c, ci);
            c01.add(FloatVector.fromArray(SP, c, ci + VL)).intoArray(c, ci + VL);
            c10.add(FloatVector.fromArray(SP, c, ci + ldc)).intoArray(c, ci + ldc);
            c11.add(FloatVector.fromArray(SP, c, ci + ldc + VL)).intoArray(c, ci + ldc + VL);
            c20.add(FloatVector.fromArray(SP, c, ci + 2 * ldc)).intoArray(c, ci + 2 * ldc);
            c21.add(FloatVector.fromArray(SP, c, ci + 2 * ldc + VL)).intoArray(c, ci + 2 * ldc + VL);
            c30.add(FloatVector.fromArray(SP, c, ci + 3 * ldc)).intoArray(c, ci + 3 * ldc);
            c31.add(FloatVector.fromArray(SP, c, ci + 3 * ldc + VL)).intoArray(c, ci + 3 * ldc + VL);
            c40.add(FloatVector.fromArray(SP, c, ci + 4 * ldc)).intoArray(c, ci + 4 * ldc);
            c41.add(FloatVector.fromArray(SP, c, ci + 4 * ldc + VL)).intoArray(c, ci + 4 * ldc + VL);
            c50.add(FloatVector.fromArray(SP, c, ci + 5 * ldc)).intoArray(c, ci + 5 * ldc);
            c51.add(FloatVector.fromArray(SP, c, ci + 5 * ldc + VL)).intoArray(c, ci + 5 * ldc + VL);
        }
    }

    /**
     * {@link #kernel} with 4 rows (8 accumulators): the tile for 16 vector registers ({@link Registers#FEW}); also
     * {@link QMatMul}'s there.
     */
    static void kernel4(
            int kc, float[] a, int ar, int lda, float[] pb, int pbi, float[] c, int ci, int ldc, boolean first) {
        FloatVector c00 = FloatVector.zero(SP), c01 = c00, c10 = c00, c11 = c00;
        FloatVector c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        int a0 = ar, a1 = ar + lda, a2 = ar + 2 * lda, a3 = ar + 3 * lda;
        for (int kk = 0; kk < kc; kk++) {
            FloatVector b0 = FloatVector.fromArray(SP, pb, pbi);
            FloatVector b1 = FloatVector.fromArray(SP, pb, pbi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[a0 + kk]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[a1 + kk]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[a2 + kk]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[a3 + kk]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            pbi += NR;
        }
        if (first) {
            c00.intoArray(c, ci);
            c01.intoArray(c, ci + VL);
            c10.intoArray(c, ci + ldc);
            c11.intoArray(c, ci + ldc + VL);
            c20.intoArray(c, ci + 2 * ldc);
            c21.intoArray(c, ci + 2 * ldc + VL);
            c30.intoArray(c, ci + 3 * ldc);
            c31.intoArray(c, ci + 3 * ldc + VL);
        } else {
            c00.add(FloatVector.fromArray(SP, c, ci)).intoArray(c, ci);
            c01.add(FloatVector.fromArray(SP, c, ci + VL)).intoArray(c, ci + VL);
            c10.add(FloatVector.fromArray(SP, c, ci + ldc)).intoArray(c, ci + ldc);
            c11.add(FloatVector.fromArray(SP, c, ci + ldc + VL)).intoArray(c, ci + ldc + VL);
            c20.add(FloatVector.fromArray(SP, c, ci + 2 * ldc)).intoArray(c, ci + 2 * ldc);
            c21.add(FloatVector.fromArray(SP, c, ci + 2 * ldc + VL)).intoArray(c, ci + 2 * ldc + VL);
            c30.add(FloatVector.fromArray(SP, c, ci + 3 * ldc)).intoArray(c, ci + 3 * ldc);
            c31.add(FloatVector.fromArray(SP, c, ci + 3 * ldc + VL)).intoArray(c, ci + 3 * ldc + VL);
        }
    }
}
