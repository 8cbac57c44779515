package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * QMATMUL ({@link OpParams.QMatMul}): each row group of x quantized to uint8 as ONNX Runtime's DynamicQuantizeLinear
 * does, the int8 weight product accumulated exactly, the float scale applied. Bitwise what the integer reference
 * gives.
 *
 * <p>The product runs on fp32 FMAs, which are exact here: {@code q - z} lies in [-255, 255] and {@code w - wZero} in
 * [-255, 255], so every partial sum of up to 256 products is an integer of magnitude at most 255 * 255 *
 * 256 = 16,646,400 < 2^24 and every float addition along the way is exact; weights closer to their zero points take
 * deeper chunks ({@link #chunk}: 512 for symmetric int8 weights, whose products reach 255 * 128). Each chunk's sums
 * are converted to int32 and added as integers; on the last chunk the total is scaled straight into the output (a
 * single chunk's float sums are the total already). The weight stays int8 in memory: the graph's {@code (K, N)} array
 * (MatMulInteger's layout, what the other backends read) and, for this backend, a copy packed once in {@link
 * #NB}-column blocks ({@link Packed}: each task's K x NB bytes contiguous). Few rows (one text, a decoding step) read
 * the packed bytes directly ({@link #fewRows}); more widen its chunk x {@link #NR} panels, one at a time, into a
 * float scratch, once for all the rows of a task's block.
 * docs/performance.md ("int8 GEMM") has the measurement against the alternatives.
 */
public final class QMatMul {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_PREFERRED;
    private static final int VL = SP.length();
    /**
     * The deepest chunk: symmetric int8 weights (zero points 0, values in [-128, 127], as ONNX Runtime's {@code
     * quantize_dynamic} and {@code attn quantize} write them) take 512, so that K up to 512 is one chunk whose float
     * sums are the result.
     */
    static final int KC_MAX = 512;
    /** Register tile: MR rows by NR = 2 vectors of columns (12 accumulators: 15 of AVX2's 16 registers). */
    static final int MR = 6, NR = 2 * VL;
    /**
     * The panel path's row tile: MR, or 4 rows where there are only 16 vector registers ({@link Registers#FEW}): C2
     * loads a step's broadcasts before its FMAs, so the 6-row tile spills there (measured with {@code -XX:UseAVX=2} on
     * the Zen 5: docs/performance.md, "The panel path"). The direct path keeps its 6-row tile there, which measured
     * faster than 4 rows at one text's row counts.
     */
    static final int TR = Registers.FEW ? 4 : MR;
    /**
     * Most rows and the columns of one task's block: the int8 block is widened once per chunk for all its rows (~1% of
     * the FMAs of a full block; of one text's 8-60 rows, as much work as the FMAs). A product's row blocks are of about
     * equal size (multiples of TR but the last).
     */
    static final int MB = 240, NB = Math.max(64, NR);
    /** float 1.5 * 2^23: adding then subtracting it rounds a float of magnitude < 2^22 half to even. */
    private static final float MAGIC = 12582912f;

    private QMatMul() {}

    private static final class Scratch {
        float[] a = new float[0];
        float[] b = new float[KC_MAX * NR];
        int[] acc = new int[MB * NB];
        /** A row tile's float sums on their way from the registers to {@link #end}. */
        final float[] tile = new float[MR * NR];
        /** A task's zero points of its column block (entries past its columns are never read). */
        final float[] zero = new float[NB];
        /** A task's weight scales of its column block (entries past its columns are never read). */
        final float[] scale = new float[NB];
        /**
         * A task's block of the product on its way to the heads layout ({@link Gemm.Epilogue#heads()}): rows NB apart.
         */
        final float[] stage = new float[MB * NB];
        /**
         * The calling thread's last quantization, kept for the products after it that read the same x ({@link
         * Share}): the share that made it (null: none may reuse it), its x, rows and row scales; the values are in
         * {@link #a}.
         */
        Share owner;

        float[] ownerX, ownerScale;
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * Bytes of the int8 weights' packed copies this backend holds (one per live weight array, besides the graph's
     * row-major array: {@link Packed}).
     */
    public static long packedBytes() {
        return Packed.bytesHeld();
    }

    public static void run(Parallel par, Node node, float[] out, float[] x, float[] padding) {
        run(par, node, out, x, padding, null, null);
    }

    /**
     * Products that read the same x (and padding) with the same row groups, in the order the program runs them (a
     * layer's query, key and value projections): the first quantizes x as usual and keeps the result on the calling
     * thread; the others take it if it is still there for their x, else quantize x themselves. The quantization
     * reads only x, so taking it gives bitwise what quantizing again gives. Sound because a program's steps run one
     * after another on the calling thread, so that the first of the products always runs just before the others in
     * the same run, and x cannot change in between (it is an input of the ones still to come); anything else that
     * quantizes on that thread in between leaves its own result, which the check refuses.
     */
    public static final class Share {
        private final Node first, last;

        /** The products' first and last node in graph order. */
        public Share(Node first, Node last) {
            if (first == last) throw new IllegalArgumentException("a share of one product");
            this.first = first;
            this.last = last;
        }

        boolean first(Node node) {
            return node == first;
        }
    }

    private static final java.util.concurrent.atomic.LongAdder TAKEN = new java.util.concurrent.atomic.LongAdder();

    /** How many products took a kept quantization ({@link Share}) since the JVM started (tests, diagnostics). */
    public static long sharedTaken() {
        return TAKEN.sum();
    }

    /**
     * The op ({@code padding}: the padded batch's key-padding mask, its second input, or null), then (e non-null) the
     * GEMM epilogue {@link Fusions} matched after it, applied block by block; {@code share} (null: none) the
     * products that quantize the same x ({@link Share}).
     */
    public static void run(
            Parallel par, Node node, float[] out, float[] x, float[] padding, Gemm.Epilogue e, Share share) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        // buffers may be larger than the value (slots are reused): the row count comes from the shape
        int rows = node.input(0).shape().size() / p.k();
        Scratch s = SCRATCH.get();
        float[] rowScale;
        if (share != null && !share.first(node) && s.owner == share && s.ownerX == x && s.ownerScale.length == rows) {
            TAKEN.increment();
            rowScale = s.ownerScale;
        } else {
            rowScale = quantize(par, p, x, padding, rows, s);
            boolean keep = share != null && share.first(node);
            s.owner = keep ? share : null;
            s.ownerX = keep ? x : null;
            s.ownerScale = keep ? rowScale : null;
        }
        // after the share's last product nothing may take it: let go of x (an arena slot) and the graph
        if (share != null && node == share.last) {
            s.owner = null;
            s.ownerX = null;
            s.ownerScale = null;
        }
        gemm(par, p, s.a, rowScale, rows, out, null, e);
    }

    /**
     * The op on {@code rows} rows of x; with {@code accOut} non-null the int32 accumulators are written there too (for
     * tests).
     */
    public static void run(Parallel par, OpParams.QMatMul p, float[] x, float[] out, int rows, int[] accOut) {
        run(par, p, x, null, out, rows, accOut, null);
    }

    static void run(
            Parallel par,
            OpParams.QMatMul p,
            float[] x,
            float[] padding,
            float[] out,
            int rows,
            int[] accOut,
            Gemm.Epilogue e) {
        Scratch s = SCRATCH.get();
        s.owner = null;
        float[] rowScale = quantize(par, p, x, padding, rows, s);
        gemm(par, p, s.a, rowScale, rows, out, accOut, e);
    }

    /**
     * x quantized into the calling thread's {@code s.a} ({@link #quantize(Parallel, int[], float[], float[], int,
     * float[], float[])}); returns the row scales.
     */
    private static float[] quantize(Parallel par, OpParams.QMatMul p, float[] x, float[] padding, int rows, Scratch s) {
        int k = p.k();
        int padded = (rows + MR - 1) / MR * MR + MR; // a last tile of TR rows may start 2 rows before the end
        if (s.a.length < padded * k) s.a = new float[padded * k]; // the callers set or clear s.owner after this
        // (rows up to the next multiple of MR: a last tile of 2-5 rows runs as a whole tile, whose rows past the
        // end read whatever is there and give tile rows that end() never stores)
        float[] rowScale = new float[rows];
        quantize(par, p.groupsOf(rows), x, padding, k, s.a, rowScale);
        return rowScale;
    }

    /**
     * DynamicQuantizeLinear per group; writes {@code q - z} as floats into {@code a} and each row's scale. Rows that
     * {@code padding} marks (non-zero; null: none) do not enter their group's range.
     */
    static void quantize(Parallel par, int[] groups, float[] x, float[] padding, int k, float[] a, float[] rowScale) {
        int rows = rowScale.length; // x may be longer than rows * k
        float[] lo = new float[rows], hi = new float[rows];
        par.forRange(rows, Math.max(1, 8192 / Math.max(1, k)), (from, to) -> {
            for (int r = from; r < to; r++) {
                int o = r * k, i = 0;
                FloatVector vlo = FloatVector.zero(SP), vhi = FloatVector.zero(SP);
                for (int ub = SP.loopBound(k); i < ub; i += VL) {
                    FloatVector v = FloatVector.fromArray(SP, x, o + i);
                    vlo = vlo.min(v);
                    vhi = vhi.max(v);
                }
                float l = vlo.reduceLanes(VectorOperators.MIN), h = vhi.reduceLanes(VectorOperators.MAX);
                for (; i < k; i++) {
                    l = Math.min(l, x[o + i]);
                    h = Math.max(h, x[o + i]);
                }
                lo[r] = l;
                hi[r] = h;
            }
        });
        float[] zeroOf = new float[rows];
        int r0 = 0;
        for (int g : groups) {
            float l = 0f, h = 0f; // the range always holds 0
            for (int r = r0; r < r0 + g; r++) {
                if (padding != null && padding[r] != 0f) continue;
                l = Math.min(l, lo[r]);
                h = Math.max(h, hi[r]);
            }
            float scale = h == l ? 1f : (h - l) / 255f;
            float zero = (float) Math.rint(Math.max(0f, Math.min(255f, 0f - l / scale)));
            for (int r = r0; r < r0 + g; r++) {
                rowScale[r] = scale;
                zeroOf[r] = zero;
            }
            r0 += g;
        }
        par.forRange(rows, Math.max(1, 8192 / Math.max(1, k)), (from, to) -> {
            for (int r = from; r < to; r++) {
                float scale = rowScale[r], zero = zeroOf[r], top = 255f - zero, bottom = -zero;
                int o = r * k, i = 0;
                for (int ub = SP.loopBound(k); i < ub; i += VL) {
                    FloatVector q = FloatVector.fromArray(SP, x, o + i).div(scale);
                    q = q.add(MAGIC).sub(MAGIC); // round half to even: |x / scale| <= 255
                    q.max(bottom).min(top).intoArray(a, o + i);
                }
                for (; i < k; i++) {
                    float q = (float) Math.rint(x[o + i] / scale);
                    a[o + i] = Math.max(bottom, Math.min(top, q));
                }
            }
        });
    }

    /** {@code out[r][n] = (float) acc * (rowScale[r] * wScale[n])}, acc the exact product of a and the weight. */
    static void gemm(
            Parallel par,
            OpParams.QMatMul p,
            float[] a,
            float[] rowScale,
            int rows,
            float[] out,
            int[] accOut,
            Gemm.Epilogue e) {
        int n = p.n();
        Packed w = Packed.of(p.weight());
        int kc = chunk(p, w), nBlocks = (n + NB - 1) / NB;
        if (rows <= FEW) {
            par.forEach(nBlocks, t -> fewRows(p, a, rowScale, rows, out, accOut, e, w, kc, t));
            return;
        }
        // row blocks of equal size (a multiple of TR, at most MB): 250 rows run as 126 + 124, not 240 + 10, so that
        // no block widens its panels for a handful of rows
        int mBlocks = (rows + MB - 1) / MB;
        int mb = Math.min(MB, ((rows + mBlocks - 1) / mBlocks + TR - 1) / TR * TR);
        int blocks = (rows + mb - 1) / mb;
        par.forEach(
                blocks * nBlocks, t -> task(p, a, rowScale, rows, out, accOut, e, w, kc, mb, t / nBlocks, t % nBlocks));
    }

    /**
     * The K chunk of this product: the most products whose partial float sums stay exact integers, {@code 2^24 / (255
     * * max |w - wZero|)} (the activations less their zero point lie in [-255, 255]), at most {@link #KC_MAX}; at
     * least 258 for any int8 weight.
     */
    static int chunk(OpParams.QMatMul p, Packed w) {
        int zMin = Integer.MAX_VALUE, zMax = Integer.MIN_VALUE;
        for (byte z : p.zeroPoint()) {
            zMin = Math.min(zMin, z);
            zMax = Math.max(zMax, z);
        }
        int most = Math.max(
                Math.max(Math.abs(w.max - zMin), Math.abs(w.max - zMax)),
                Math.max(Math.abs(w.min - zMin), Math.abs(w.min - zMax)));
        return most == 0 ? KC_MAX : Math.min(KC_MAX, (1 << 24) / (255 * most));
    }

    /**
     * Rows up to which the product reads the packed int8 weight directly ({@link #fewRows}), widening each weight
     * vector in registers as the FMAs take it, instead of widening chunk x NR panels into the scratch and reading them
     * back: a decoding step's one row per sequence and one text's 8-60 tokens. Measured (Int8Gemm, one thread, Zen 5
     * family 26 model 2, GMAC/s direct against panels): 1 x 512 x 2048 17.7 / 4.6, 4 x 512 x 2048 69 / 19, 8 x 384 x
     * 1536 53 / 36, 25 x 384 x 1536 72 / 63, 60 x 384 x 1536 77 / 73, 64-96 rows equal within the spread, 128-240 rows
     * 0.93-0.97x (docs/performance.md, "Decoding steps").
     */
    static final int FEW = 64;

    /**
     * The columns {@code nb * NB ..} of {@code rows <= FEW} rows: per chunk (of kc), each pair of weight vectors
     * loaded as bytes from the packed block (K rows of NB contiguous bytes), widened (less the zero points) and
     * multiplied into every row's accumulators; the chunk's exact float sums added as int32 in registers; then
     * {@link #scaleRow}, the same float product per element as {@link #task}'s {@link #end}, and the epilogue. Bitwise
     * {@link #task}'s result: the integer sums are exact in either
     * order.
     */
    private static void fewRows(
            OpParams.QMatMul p,
            float[] a,
            float[] rowScale,
            int rows,
            float[] out,
            int[] accOut,
            Gemm.Epilogue e,
            Packed packed,
            int kc,
            int nb) {
        int k = p.k(), n = p.n(), j0 = nb * NB, cols = Math.min(NB, n - j0);
        byte[] w = packed.bytes;
        int wb = packed.block(nb);
        Scratch s = SCRATCH.get();
        float[] zero = s.zero;
        boolean zeros = true;
        for (int j = 0; j < cols; j++) zeros &= (zero[j] = p.zeroPoint(j0 + j)) == 0f;
        int[] acc = s.acc; // FEW x NB int32 (FEW <= MB), row r at r * NB
        // whole pairs of vectors, a last partial one too: the packed block's columns past N are zero bytes, whose
        // sums land in accumulators that are never read
        for (int c = 0; c < cols; c += NR) {
            int r = 0;
            for (; rows - r >= 5; r += 6) few6(a, r * k, k, w, wb + c, zero, !zeros, c, acc, r * NB + c, kc);
            if (rows - r >= 2) few4(a, r * k, k, w, wb + c, zero, !zeros, c, acc, r * NB + c, kc);
            else if (rows - r == 1) few1(a, r * k, k, w, wb + c, zero, !zeros, c, acc, r * NB + c, kc);
        }
        if (e != null && e.heads() > 0) { // scaled into the stage, then bias and ReLU on the way to the heads layout
            for (int r = 0; r < rows; r++) scaleRow(p, acc, r * NB, rowScale[r], s.stage, r * NB, j0, cols, null);
            Gemm.scatter(s.stage, NB, rows, cols, out, 0, n, 0, j0, true, true, e);
            return;
        }
        for (int r = 0; r < rows; r++) scaleRow(p, acc, r * NB, rowScale[r], out, r * n + j0, j0, cols, accOut);
        if (e != null) Gemm.epilogue(out, j0, n, rows, cols, j0, e);
    }

    /**
     * One row of a (from {@code ai}) times NR columns of a packed block, from {@code w[wi0]}, a row every NB bytes
     * (less their zero points from {@code zj} when {@code subtract}; else they are all 0): the exact int32 sums into
     * acc at {@code ci}, each chunk's exact float sums converted and added in registers. (The zero-point
     * vectors are always loaded, never null: a {@code FloatVector} variable that could be null, tested inside the loop,
     * crashed C2's compiled kernel in JDK 25.0.3, SIGSEGV at address 0x10: twice in a row, then in 1 of 6 QMatMulTest
     * runs; 0 of 13 since.)
     */
    private static void few1(
            float[] a,
            int ai,
            int k,
            byte[] w,
            int wi0,
            float[] zero,
            boolean subtract,
            int zj,
            int[] acc,
            int ci,
            int kc) {
        IntVector i00 = IntVector.zero(IS), i01 = IntVector.zero(IS);
        FloatVector z0 = FloatVector.fromArray(SP, zero, zj);
        FloatVector z1 = FloatVector.fromArray(SP, zero, zj + VL);
        for (int k0 = 0; k0 < k; k0 += kc) {
            int k1 = Math.min(k, k0 + kc);
            FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP);
            for (int kk = k0; kk < k1; kk++) {
                int wi = wi0 + kk * NB;
                FloatVector b0 = (FloatVector) ByteVector.fromArray(BV, w, wi).convertShape(VectorOperators.B2F, SP, 0);
                FloatVector b1 =
                        (FloatVector) ByteVector.fromArray(BV, w, wi + VL).convertShape(VectorOperators.B2F, SP, 0);
                if (subtract) {
                    b0 = b0.sub(z0);
                    b1 = b1.sub(z1);
                }
                FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
                c00 = x.fma(b0, c00);
                c01 = x.fma(b1, c01);
            }
            i00 = i00.add((IntVector) c00.convertShape(VectorOperators.F2I, IS, 0));
            i01 = i01.add((IntVector) c01.convertShape(VectorOperators.F2I, IS, 0));
        }
        i00.intoArray(acc, ci);
        i01.intoArray(acc, ci + VL);
    }

    /**
     * Four rows of a from {@code ai}, as {@link #few1} (rows past the product's last are the padding of a's scratch:
     * computed, never stored, as in the panel path).
     */
    private static void few4(
            float[] a,
            int ai,
            int k,
            byte[] w,
            int wi0,
            float[] zero,
            boolean subtract,
            int zj,
            int[] acc,
            int ci,
            int kc) {
        IntVector i00 = IntVector.zero(IS), i01 = IntVector.zero(IS);
        IntVector i10 = IntVector.zero(IS), i11 = IntVector.zero(IS);
        IntVector i20 = IntVector.zero(IS), i21 = IntVector.zero(IS);
        IntVector i30 = IntVector.zero(IS), i31 = IntVector.zero(IS);
        FloatVector z0 = FloatVector.fromArray(SP, zero, zj);
        FloatVector z1 = FloatVector.fromArray(SP, zero, zj + VL);
        int a1 = ai + 1 * k;
        int a2 = ai + 2 * k;
        int a3 = ai + 3 * k;
        for (int k0 = 0; k0 < k; k0 += kc) {
            int k1 = Math.min(k, k0 + kc);
            FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP);
            FloatVector c10 = FloatVector.zero(SP), c11 = FloatVector.zero(SP);
            FloatVector c20 = FloatVector.zero(SP), c21 = FloatVector.zero(SP);
            FloatVector c30 = FloatVector.zero(SP), c31 = FloatVector.zero(SP);
            for (int kk = k0; kk < k1; kk++) {
                int wi = wi0 + kk * NB;
                FloatVector b0 = (FloatVector) ByteVector.fromArray(BV, w, wi).convertShape(VectorOperators.B2F, SP, 0);
                FloatVector b1 =
                        (FloatVector) ByteVector.fromArray(BV, w, wi + VL).convertShape(VectorOperators.B2F, SP, 0);
                if (subtract) {
                    b0 = b0.sub(z0);
                    b1 = b1.sub(z1);
                }
                FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
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
            }
            i00 = i00.add((IntVector) c00.convertShape(VectorOperators.F2I, IS, 0));
            i01 = i01.add((IntVector) c01.convertShape(VectorOperators.F2I, IS, 0));
            i10 = i10.add((IntVector) c10.convertShape(VectorOperators.F2I, IS, 0));
            i11 = i11.add((IntVector) c11.convertShape(VectorOperators.F2I, IS, 0));
            i20 = i20.add((IntVector) c20.convertShape(VectorOperators.F2I, IS, 0));
            i21 = i21.add((IntVector) c21.convertShape(VectorOperators.F2I, IS, 0));
            i30 = i30.add((IntVector) c30.convertShape(VectorOperators.F2I, IS, 0));
            i31 = i31.add((IntVector) c31.convertShape(VectorOperators.F2I, IS, 0));
        }
        i00.intoArray(acc, ci);
        i01.intoArray(acc, ci + VL);
        i10.intoArray(acc, ci + NB);
        i11.intoArray(acc, ci + NB + VL);
        i20.intoArray(acc, ci + 2 * NB);
        i21.intoArray(acc, ci + 2 * NB + VL);
        i30.intoArray(acc, ci + 3 * NB);
        i31.intoArray(acc, ci + 3 * NB + VL);
    }

    /**
     * Six rows of a from {@code ai}, as {@link #few4}: the inner loop holds 12 float accumulators, 2 weight vectors and
     * a broadcast (15 of AVX2's 16 registers); the 12 int32 sums are touched once per chunk (with 16 registers
     * they live in memory between chunks).
     */
    private static void few6(
            float[] a,
            int ai,
            int k,
            byte[] w,
            int wi0,
            float[] zero,
            boolean subtract,
            int zj,
            int[] acc,
            int ci,
            int kc) {
        IntVector i00 = IntVector.zero(IS), i01 = IntVector.zero(IS);
        IntVector i10 = IntVector.zero(IS), i11 = IntVector.zero(IS);
        IntVector i20 = IntVector.zero(IS), i21 = IntVector.zero(IS);
        IntVector i30 = IntVector.zero(IS), i31 = IntVector.zero(IS);
        IntVector i40 = IntVector.zero(IS), i41 = IntVector.zero(IS);
        IntVector i50 = IntVector.zero(IS), i51 = IntVector.zero(IS);
        FloatVector z0 = FloatVector.fromArray(SP, zero, zj);
        FloatVector z1 = FloatVector.fromArray(SP, zero, zj + VL);
        int a1 = ai + 1 * k;
        int a2 = ai + 2 * k;
        int a3 = ai + 3 * k;
        int a4 = ai + 4 * k;
        int a5 = ai + 5 * k;
        for (int k0 = 0; k0 < k; k0 += kc) {
            int k1 = Math.min(k, k0 + kc);
            FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP);
            FloatVector c10 = FloatVector.zero(SP), c11 = FloatVector.zero(SP);
            FloatVector c20 = FloatVector.zero(SP), c21 = FloatVector.zero(SP);
            FloatVector c30 = FloatVector.zero(SP), c31 = FloatVector.zero(SP);
            FloatVector c40 = FloatVector.zero(SP), c41 = FloatVector.zero(SP);
            FloatVector c50 = FloatVector.zero(SP), c51 = FloatVector.zero(SP);
            for (int kk = k0; kk < k1; kk++) {
                int wi = wi0 + kk * NB;
                FloatVector b0 = (FloatVector) ByteVector.fromArray(BV, w, wi).convertShape(VectorOperators.B2F, SP, 0);
                FloatVector b1 =
                        (FloatVector) ByteVector.fromArray(BV, w, wi + VL).convertShape(VectorOperators.B2F, SP, 0);
                if (subtract) {
                    b0 = b0.sub(z0);
                    b1 = b1.sub(z1);
                }
                FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
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
            }
            i00 = i00.add((IntVector) c00.convertShape(VectorOperators.F2I, IS, 0));
            i01 = i01.add((IntVector) c01.convertShape(VectorOperators.F2I, IS, 0));
            i10 = i10.add((IntVector) c10.convertShape(VectorOperators.F2I, IS, 0));
            i11 = i11.add((IntVector) c11.convertShape(VectorOperators.F2I, IS, 0));
            i20 = i20.add((IntVector) c20.convertShape(VectorOperators.F2I, IS, 0));
            i21 = i21.add((IntVector) c21.convertShape(VectorOperators.F2I, IS, 0));
            i30 = i30.add((IntVector) c30.convertShape(VectorOperators.F2I, IS, 0));
            i31 = i31.add((IntVector) c31.convertShape(VectorOperators.F2I, IS, 0));
            i40 = i40.add((IntVector) c40.convertShape(VectorOperators.F2I, IS, 0));
            i41 = i41.add((IntVector) c41.convertShape(VectorOperators.F2I, IS, 0));
            i50 = i50.add((IntVector) c50.convertShape(VectorOperators.F2I, IS, 0));
            i51 = i51.add((IntVector) c51.convertShape(VectorOperators.F2I, IS, 0));
        }
        i00.intoArray(acc, ci);
        i01.intoArray(acc, ci + VL);
        i10.intoArray(acc, ci + NB);
        i11.intoArray(acc, ci + NB + VL);
        i20.intoArray(acc, ci + 2 * NB);
        i21.intoArray(acc, ci + 2 * NB + VL);
        i30.intoArray(acc, ci + 3 * NB);
        i31.intoArray(acc, ci + 3 * NB + VL);
        i40.intoArray(acc, ci + 4 * NB);
        i41.intoArray(acc, ci + 4 * NB + VL);
        i50.intoArray(acc, ci + 5 * NB);
        i51.intoArray(acc, ci + 5 * NB + VL);
    }

    /** How a kernel call ends a chunk: acc = sums, acc += sums, out = (acc + sums) * scale, out = sums * scale. */
    static final int FIRST = 0, MID = 1, LAST = 2, ONLY = 3;

    /**
     * Rows {@code mb * blockRows ..} by the columns {@code nb * NB ..}: per chunk of kc, each NR-column panel
     * widened once into b and multiplied into every row tile; each tile ends its chunk by {@link #end} (the chunk's
     * exact float sums converted to int32 and added, or, on the last chunk, the int32 total converted back and scaled
     * straight into out; a single chunk's float sums are the result already). With {@code accOut} (tests) the int32
     * totals are kept and scaled by {@link #scaleRow}, which gives the same floats.
     */
    private static void task(
            OpParams.QMatMul p,
            float[] a,
            float[] rowScale,
            int rows,
            float[] out,
            int[] accOut,
            Gemm.Epilogue e,
            Packed packed,
            int kc,
            int blockRows,
            int mb,
            int nb) {
        int k = p.k(), n = p.n();
        int r0 = mb * blockRows, r1 = Math.min(rows, r0 + blockRows), j0 = nb * NB, cols = Math.min(NB, n - j0);
        Scratch s = SCRATCH.get();
        float[] b = s.b, tile = s.tile;
        int[] acc = s.acc;
        byte[] w = packed.bytes;
        int wb = packed.block(nb);
        float[] zero = s.zero, scale = s.scale; // entries past this block's columns are never read
        boolean zeros = true;
        for (int j = 0; j < cols; j++) {
            zeros &= (zero[j] = p.zeroPoint(j0 + j)) == 0f;
            scale[j] = p.scale(j0 + j);
        }
        // K = 0 (tests and probes only; a graph's products have K >= 1): no chunk, the zero totals scaled
        if (k == 0) java.util.Arrays.fill(acc, 0, (r1 - r0) * NB, 0);
        boolean finish = accOut == null && k > 0;
        // the heads layout: the block is scaled into the stage (rows NB apart), then scattered with its bias
        boolean heads = e != null && e.heads() > 0;
        float[] dst = heads ? s.stage : out;
        int ldd = heads ? NB : n, d0 = heads ? -r0 * NB : j0; // row r's first column at r * ldd + d0
        for (int k0 = 0; k0 < k; k0 += kc) {
            int kd = Math.min(kc, k - k0);
            boolean last = k0 + kd >= k;
            int mode = finish && last ? (k0 == 0 ? ONLY : LAST) : k0 == 0 ? FIRST : MID;
            // panel by panel: each widened (kd x NR floats) just before every row strip of the block runs on it
            for (int jp = 0; jp < NB && jp < cols; jp += NR) {
                int pc = Math.min(NR, cols - jp);
                widen(w, wb + k0 * NB + jp, kd, pc, zeros ? null : zero, jp, b);
                for (int r = r0; r < r1; r += TR) {
                    int mr = Math.min(TR, r1 - r);
                    // a last tile of 2-5 rows as a whole one (1.1-1.2x its rows one by one: two accumulator chains per
                    // row leave the FMA latency exposed); a single row by itself
                    // the float32 GEMM's kernels: the same FMA sequence, exact here (the class comment)
                    if (mr >= 2 && TR == 4) Gemm.kernel4(kd, a, r * k + k0, k, b, 0, tile, 0, NR, true);
                    else if (mr >= 2) Gemm.kernel6(kd, a, r * k + k0, k, b, 0, tile, 0, NR, true);
                    else kernel1(a, r * k + k0, b, kd, tile);
                    end(
                            mode,
                            tile,
                            mr,
                            pc,
                            acc,
                            (r - r0) * NB + jp,
                            dst,
                            r * ldd + d0 + jp,
                            ldd,
                            rowScale,
                            r,
                            scale,
                            jp);
                }
            }
        }
        if (!finish)
            for (int r = r0; r < r1; r++)
                scaleRow(p, acc, (r - r0) * NB, rowScale[r], dst, r * ldd + d0, j0, cols, heads ? null : accOut);
        if (heads) Gemm.scatter(s.stage, NB, r1 - r0, cols, out, 0, n, r0, j0, true, true, e);
        else if (e != null) Gemm.epilogue(out, r0 * n + j0, n, r1 - r0, cols, j0, e);
    }

    /**
     * One row's {@code out[oi + j] = (float) acc[ai + j] * (rs * wScale[j0 + j])} for {@code j < cols}, VL at a time
     * (the same product per element), or element by element with the accumulators copied to {@code accOut} (tests).
     */
    private static void scaleRow(
            OpParams.QMatMul p, int[] acc, int ai, float rs, float[] out, int oi, int j0, int cols, int[] accOut) {
        float[] scale = p.scale();
        int j = 0;
        if (accOut == null) {
            for (; j + VL <= cols; j += VL) {
                FloatVector sc = scale.length == 1
                        ? FloatVector.broadcast(SP, rs * scale[0])
                        : FloatVector.broadcast(SP, rs).mul(FloatVector.fromArray(SP, scale, j0 + j));
                ((FloatVector) IntVector.fromArray(IS, acc, ai + j).convertShape(VectorOperators.I2F, SP, 0))
                        .mul(sc)
                        .intoArray(out, oi + j);
            }
        }
        for (; j < cols; j++) {
            out[oi + j] = (float) acc[ai + j] * (rs * p.scale(j0 + j));
            if (accOut != null) accOut[oi + j] = acc[ai + j];
        }
    }

    /**
     * Widens kc rows of a packed block from {@code w[wi0]} (a row every NB bytes), pc <= NR columns, less their zero
     * points ({@code zero} from {@code zj}; null: all 0, nothing subtracted), into b's first kc x NR floats as the
     * kernels' panel: column c of row kk at {@code kk * NR + c}, zero past pc. VL bytes at a time (a 128-bit byte load
     * widened to a whole float vector on AVX-512, 64-bit to 256 on AVX2). Measured on products of 8-60 rows (one
     * text's), where widening is as much work as the FMAs: the 64-column block widened at once, 8 bytes at a time with
     * the zero points always subtracted, into a scratch larger than L1 was 1.2-1.7x slower (docs/performance.md).
     */
    private static void widen(byte[] w, int wi0, int kc, int pc, float[] zero, int zj, float[] b) {
        for (int kk = 0; kk < kc; kk++) {
            int wi = wi0 + kk * NB, bi = kk * NR, c = 0;
            for (; c + VL <= pc; c += VL) {
                FloatVector v =
                        (FloatVector) ByteVector.fromArray(BV, w, wi + c).convertShape(VectorOperators.B2F, SP, 0);
                if (zero != null) v = v.sub(FloatVector.fromArray(SP, zero, zj + c));
                v.intoArray(b, bi + c);
            }
            for (; c < pc; c++) b[bi + c] = w[wi + c] - (zero == null ? 0f : zero[zj + c]);
            for (; c < NR; c++) b[bi + c] = 0f;
        }
    }

    /**
     * An int8 weight {@code (K, N)} packed once for this backend: NB-column blocks one after another, each K rows of NB
     * contiguous bytes (columns past N zero), so that a task reads its block as one stream. Read row-major, a task's
     * 64 columns are one 64-byte piece per K row at a stride of N bytes, two cache lines unless the array's data
     * happens to start 64-byte aligned (the collector places it): measured, the same products ran at 0.55-0.65x under
     * the parallel collector of their rate under G1, and packed they run at the better rate under both
     * (docs/performance.md, "int8 weights packed once"). Found again by the identity of the weight's array, as {@link
     * Gemm.PackedB} is: packed on the first product, kept as long as the array lives (the weight must not change
     * after its first product, as for every constant the engine is handed).
     */
    static final class Packed {
        private static final java.util.Map<byte[], Packed> CACHE =
                java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

        final byte[] bytes;
        private final int k;
        /** The weight's least and greatest values (for {@link #chunk}). */
        final int min, max;

        private Packed(byte[] w, int k, int n) {
            this.k = k;
            int lo = 0, hi = 0;
            for (byte v : w) {
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
            min = lo;
            max = hi;
            int blocks = (n + NB - 1) / NB;
            bytes = new byte[Math.multiplyExact(blocks, Math.multiplyExact(k, NB))];
            for (int nb = 0; nb < blocks; nb++) {
                int j0 = nb * NB, cols = Math.min(NB, n - j0), o = block(nb);
                for (int kk = 0; kk < k; kk++) System.arraycopy(w, kk * n + j0, bytes, o + kk * NB, cols);
            }
        }

        /** Bytes held by the packed copies of the weights that are still alive (memory reports, tests). */
        static long bytesHeld() {
            synchronized (CACHE) {
                long sum = 0;
                for (Packed p : CACHE.values()) sum += p.bytes.length;
                return sum;
            }
        }

        /** Where block {@code nb} (columns {@code nb * NB ..}) starts. */
        int block(int nb) {
            return nb * k * NB;
        }

        /** The weight's packed copy, from the cache or packed now (once per array: concurrent first calls wait). */
        static Packed of(io.attn.tensor.Tensor weight) {
            byte[] w = weight.int8();
            Packed p = CACHE.get(w);
            if (p != null && p.k == weight.dim(0)) return p;
            synchronized (CACHE) {
                p = CACHE.get(w);
                if (p == null || p.k != weight.dim(0)) {
                    p = new Packed(w, weight.dim(0), weight.dim(1));
                    CACHE.put(w, p);
                }
                return p;
            }
        }
    }

    /** Bytes of one float vector's lane count (SP's VL lanes of 8 bits). */
    private static final VectorSpecies<Byte> BV =
            VectorSpecies.of(byte.class, jdk.incubator.vector.VectorShape.forBitSize(8 * VL));

    private static void kernel1(float[] a, int ai, float[] b, int kd, float[] t) {
        FloatVector c0 = FloatVector.zero(SP), c1 = FloatVector.zero(SP);
        for (int kk = 0; kk < kd; kk++) {
            int bi = kk * NR;
            FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
            c0 = x.fma(FloatVector.fromArray(SP, b, bi), c0);
            c1 = x.fma(FloatVector.fromArray(SP, b, bi + VL), c1);
        }
        c0.intoArray(t, 0);
        c1.intoArray(t, VL);
    }

    /**
     * A row tile's chunk ended: its exact float sums in t (mr rows of NR, pc of the columns the product's) converted to
     * int32 into acc from {@code ci} (rows NB apart; {@link #FIRST}) or added there ({@link #MID}); or, on the last
     * chunk, the int32 total ({@link #LAST}) or the sums themselves ({@link #ONLY}: exact integers, taken through int32
     * as every chunk's are, so that a NaN input gives 0 here as on the other paths) times {@code rowScale[ri + r] *
     * scale[sj + c]} into out from {@code oi} (rows n apart): per element the float product {@link #scaleRow}
     * computes. (The tile passes through t, 12 stores and loads per chunk, because a helper
     * taking the kernel's vectors as arguments is compiled on its own once hot, past C2's inlining size, and then
     * every vector argument is allocated: 10x slower.)
     */
    private static void end(
            int mode,
            float[] t,
            int mr,
            int pc,
            int[] acc,
            int ci,
            float[] out,
            int oi,
            int n,
            float[] rowScale,
            int ri,
            float[] scale,
            int sj) {
        for (int r = 0; r < mr; r++) {
            int ti = r * NR, ai = ci + r * NB, o = oi + r * n;
            if (mode == FIRST || mode == MID) {
                for (int c = 0; c < NR; c += VL) {
                    IntVector v =
                            (IntVector) FloatVector.fromArray(SP, t, ti + c).convertShape(VectorOperators.F2I, IS, 0);
                    if (mode == MID) v = v.add(IntVector.fromArray(IS, acc, ai + c));
                    v.intoArray(acc, ai + c);
                }
                continue;
            }
            float rs = rowScale[ri + r];
            FloatVector vr = FloatVector.broadcast(SP, rs);
            int c = 0;
            for (; c + VL <= pc; c += VL) {
                IntVector v = (IntVector) FloatVector.fromArray(SP, t, ti + c).convertShape(VectorOperators.F2I, IS, 0);
                if (mode == LAST) v = v.add(IntVector.fromArray(IS, acc, ai + c));
                ((FloatVector) v.convertShape(VectorOperators.I2F, SP, 0))
                        .mul(vr.mul(FloatVector.fromArray(SP, scale, sj + c)))
                        .intoArray(out, o + c);
            }
            for (; c < pc; c++) {
                out[o + c] = (float) ((int) t[ti + c] + (mode == LAST ? acc[ai + c] : 0)) * (rs * scale[sj + c]);
            }
        }
    }
}
