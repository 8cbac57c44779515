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
 * <p>The product runs on fp32 FMAs, which are exact here: {@code q - z} and {@code w - wZero} lie in [-255, 255], so
 * every partial sum of up to {@link #KC} = 256 products is an integer of magnitude at most 255 * 255 * 256 =
 * 16,646,400 < 2^24 and every float addition along the way is exact; each 256-deep chunk is then converted to int32
 * and added as an integer. The weight stays int8 in memory ({@code (K, N)}, MatMulInteger's layout): each task widens
 * the 256 x {@link #NB} block of it that it multiplies into a float scratch, once for all the rows of its block.
 * docs/performance.md ("int8 GEMM") has the measurement against the alternatives.
 */
public final class QMatMul {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_PREFERRED;
    private static final int VL = SP.length();
    /** K chunk: partial sums of this many products stay exact in fp32 (see the class comment). */
    static final int KC = 256;
    /** Register tile: MR rows by NR = 2 vectors of columns (12 accumulators: 15 of AVX2's 16 registers). */
    static final int MR = 6, NR = 2 * VL;
    /**
     * Rows and columns of one task's block: the int8 block is widened once per 256-deep chunk for all MB rows (so the
     * widening is ~1% of the block's FMAs).
     */
    static final int MB = 240, NB = Math.max(64, NR);
    /** float 1.5 * 2^23: adding then subtracting it rounds a float of magnitude < 2^22 half to even. */
    private static final float MAGIC = 12582912f;

    private QMatMul() {}

    private static final class Scratch {
        float[] a = new float[0];
        float[] b = new float[KC * NB];
        int[] acc = new int[MB * NB];
        float[] sums = new float[MB * NB];
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    public static void run(Parallel par, Node node, float[] out, float[] x) {
        run(par, node, out, x, null);
    }

    /** The op, then (e non-null) the GEMM epilogue {@link Fusions} matched after it, applied block by block. */
    public static void run(Parallel par, Node node, float[] out, float[] x, Gemm.Epilogue e) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        // buffers may be larger than the value (slots are reused): the row count comes from the shape
        run(par, p, x, out, node.input(0).shape().size() / p.k(), null, e);
    }

    /**
     * The op on {@code rows} rows of x; with {@code accOut} non-null the int32 accumulators are written there too (for
     * tests).
     */
    public static void run(Parallel par, OpParams.QMatMul p, float[] x, float[] out, int rows, int[] accOut) {
        run(par, p, x, out, rows, accOut, null);
    }

    static void run(Parallel par, OpParams.QMatMul p, float[] x, float[] out, int rows, int[] accOut, Gemm.Epilogue e) {
        int k = p.k();
        Scratch s = SCRATCH.get();
        if (s.a.length < rows * k) s.a = new float[rows * k];
        float[] a = s.a;
        float[] rowScale = new float[rows];
        quantize(par, p.groupsOf(rows), x, k, a, rowScale);
        gemm(par, p, a, rowScale, rows, out, accOut, e);
    }

    /** DynamicQuantizeLinear per group; writes {@code q - z} as floats into {@code a} and each row's scale. */
    static void quantize(Parallel par, int[] groups, float[] x, int k, float[] a, float[] rowScale) {
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
        int mBlocks = (rows + MB - 1) / MB, nBlocks = (n + NB - 1) / NB;
        par.forEach(mBlocks * nBlocks, t -> task(p, a, rowScale, rows, out, accOut, e, t / nBlocks, t % nBlocks));
    }

    private static void task(
            OpParams.QMatMul p,
            float[] a,
            float[] rowScale,
            int rows,
            float[] out,
            int[] accOut,
            Gemm.Epilogue e,
            int mb,
            int nb) {
        int k = p.k(), n = p.n();
        int r0 = mb * MB, r1 = Math.min(rows, r0 + MB), j0 = nb * NB, cols = Math.min(NB, n - j0);
        Scratch s = SCRATCH.get();
        float[] b = s.b;
        int[] acc = s.acc;
        float[] sums = s.sums;
        java.util.Arrays.fill(acc, 0, (r1 - r0) * NB, 0);
        byte[] w = p.weight().int8();
        float[] zero = new float[NB];
        for (int j = 0; j < cols; j++) zero[j] = p.zeroPoint(j0 + j);
        for (int k0 = 0; k0 < k; k0 += KC) {
            int kc = Math.min(KC, k - k0);
            widen(w, n, k0, kc, j0, cols, zero, b);
            // panel by panel (kc x NR, 8 or 16 KB: stays in L1) over every row strip of the block
            for (int jp = 0; jp < NB; jp += NR) {
                int pb = jp * kc; // panel jp / NR starts at (jp / NR) * kc * NR
                int r = r0;
                for (; r + MR <= r1; r += MR) kernel6(a, r * k + k0, k, b, pb, kc, sums, (r - r0) * NB + jp);
                for (; r < r1; r++) kernel1(a, r * k + k0, b, pb, kc, sums, (r - r0) * NB + jp);
            }
            // the chunk's sums are exact integers (< 2^24): added to the int32 accumulators as such
            for (int i = 0, n8 = (r1 - r0) * NB; i < n8; i += VL)
                ((IntVector) FloatVector.fromArray(SP, sums, i).convertShape(VectorOperators.F2I, IS, 0))
                        .add(IntVector.fromArray(IS, acc, i))
                        .intoArray(acc, i);
        }
        for (int r = r0; r < r1; r++) {
            int ai = (r - r0) * NB, oi = r * n + j0;
            float rs = rowScale[r];
            for (int j = 0; j < cols; j++) {
                out[oi + j] = (float) acc[ai + j] * (rs * p.scale(j0 + j));
                if (accOut != null) accOut[oi + j] = acc[ai + j];
            }
        }
        if (e != null) Gemm.epilogue(out, r0 * n + j0, n, r1 - r0, cols, j0, e);
    }

    /**
     * Widens weight rows {@code k0 .. k0+kc}, columns {@code j0 .. j0+cols}, less their zero points, into b as NB / NR
     * panels of (kc, NR), each contiguous: column j of row kk at {@code (j / NR) * kc * NR + kk * NR + j % NR}.
     */
    private static void widen(byte[] w, int n, int k0, int kc, int j0, int cols, float[] zero, float[] b) {
        for (int kk = 0; kk < kc; kk++) {
            int wi = (k0 + kk) * n + j0, j = 0;
            for (; j + 8 <= cols; j += 8)
                ((FloatVector) ByteVector.fromArray(BS, w, wi + j).convertShape(VectorOperators.B2F, FS8, 0))
                        .sub(FloatVector.fromArray(FS8, zero, j))
                        .intoArray(b, (j / NR) * kc * NR + kk * NR + j % NR);
            for (; j < cols; j++) b[(j / NR) * kc * NR + kk * NR + j % NR] = w[wi + j] - zero[j];
            for (; j < NB; j++) b[(j / NR) * kc * NR + kk * NR + j % NR] = 0f;
        }
    }

    private static final VectorSpecies<Byte> BS = ByteVector.SPECIES_64;
    private static final VectorSpecies<Float> FS8 = FloatVector.SPECIES_256;

    /**
     * Rows {@code a[ai + r*lda ..]} (6 of them) times b's columns {@code jp .. jp+NR} over kc, added to acc (width NB)
     * as the exact integers the float sums hold.
     */
    private static void kernel6(float[] a, int ai, int lda, float[] b, int pb, int kc, float[] sums, int ci) {
        FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP);
        FloatVector c10 = FloatVector.zero(SP), c11 = FloatVector.zero(SP);
        FloatVector c20 = FloatVector.zero(SP), c21 = FloatVector.zero(SP);
        FloatVector c30 = FloatVector.zero(SP), c31 = FloatVector.zero(SP);
        FloatVector c40 = FloatVector.zero(SP), c41 = FloatVector.zero(SP);
        FloatVector c50 = FloatVector.zero(SP), c51 = FloatVector.zero(SP);
        int a1 = ai + lda, a2 = a1 + lda, a3 = a2 + lda, a4 = a3 + lda, a5 = a4 + lda;
        for (int kk = 0; kk < kc; kk++) {
            int bi = pb + kk * NR;
            FloatVector b0 = FloatVector.fromArray(SP, b, bi), b1 = FloatVector.fromArray(SP, b, bi + VL);
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
        c00.intoArray(sums, ci);
        c01.intoArray(sums, ci + VL);
        c10.intoArray(sums, ci + NB);
        c11.intoArray(sums, ci + NB + VL);
        c20.intoArray(sums, ci + 2 * NB);
        c21.intoArray(sums, ci + 2 * NB + VL);
        c30.intoArray(sums, ci + 3 * NB);
        c31.intoArray(sums, ci + 3 * NB + VL);
        c40.intoArray(sums, ci + 4 * NB);
        c41.intoArray(sums, ci + 4 * NB + VL);
        c50.intoArray(sums, ci + 5 * NB);
        c51.intoArray(sums, ci + 5 * NB + VL);
    }

    private static void kernel1(float[] a, int ai, float[] b, int pb, int kc, float[] sums, int ci) {
        FloatVector c0 = FloatVector.zero(SP), c1 = FloatVector.zero(SP);
        for (int kk = 0; kk < kc; kk++) {
            int bi = pb + kk * NR;
            FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
            c0 = x.fma(FloatVector.fromArray(SP, b, bi), c0);
            c1 = x.fma(FloatVector.fromArray(SP, b, bi + VL), c1);
        }
        c0.intoArray(sums, ci);
        c1.intoArray(sums, ci + VL);
    }
}
