package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
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
    /** Register tile: MR rows by NR = 2 vectors of columns. */
    static final int MR = 4, NR = 2 * VL;
    /** Rows and columns of one task's block. */
    static final int MB = 64, NB = 64;
    /** float 1.5 * 2^23: adding then subtracting it rounds a float of magnitude < 2^22 half to even. */
    private static final float MAGIC = 12582912f;

    private QMatMul() {}

    private static final class Scratch {
        float[] a = new float[0];
        float[] b = new float[KC * NB];
        int[] acc = new int[MB * NB];
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    public static void run(Parallel par, Node node, float[] out, float[] x) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        // buffers may be larger than the value (slots are reused): the row count comes from the shape
        run(par, p, x, out, node.input(0).shape().size() / p.k(), null);
    }

    /**
     * The op on {@code rows} rows of x; with {@code accOut} non-null the int32 accumulators are written there too (for
     * tests).
     */
    public static void run(Parallel par, OpParams.QMatMul p, float[] x, float[] out, int rows, int[] accOut) {
        int k = p.k();
        Scratch s = SCRATCH.get();
        if (s.a.length < rows * k) s.a = new float[rows * k];
        float[] a = s.a;
        float[] rowScale = new float[rows];
        quantize(par, p.groupsOf(rows), x, k, a, rowScale);
        gemm(par, p, a, rowScale, rows, out, accOut);
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
            Parallel par, OpParams.QMatMul p, float[] a, float[] rowScale, int rows, float[] out, int[] accOut) {
        int n = p.n();
        int mBlocks = (rows + MB - 1) / MB, nBlocks = (n + NB - 1) / NB;
        par.forEach(mBlocks * nBlocks, t -> task(p, a, rowScale, rows, out, accOut, t / nBlocks, t % nBlocks));
    }

    private static void task(
            OpParams.QMatMul p, float[] a, float[] rowScale, int rows, float[] out, int[] accOut, int mb, int nb) {
        int k = p.k(), n = p.n();
        int r0 = mb * MB, r1 = Math.min(rows, r0 + MB), j0 = nb * NB, cols = Math.min(NB, n - j0);
        Scratch s = SCRATCH.get();
        float[] b = s.b;
        int[] acc = s.acc;
        java.util.Arrays.fill(acc, 0, (r1 - r0) * NB, 0);
        byte[] w = p.weight().int8();
        float[] zero = new float[NB];
        for (int j = 0; j < cols; j++) zero[j] = p.zeroPoint(j0 + j);
        for (int k0 = 0; k0 < k; k0 += KC) {
            int kc = Math.min(KC, k - k0);
            widen(w, n, k0, kc, j0, cols, zero, b);
            int r = r0;
            for (; r + MR <= r1; r += MR)
                for (int jp = 0; jp < NB; jp += NR) kernel4(a, r * k + k0, k, b, jp, kc, acc, (r - r0) * NB + jp);
            for (; r < r1; r++)
                for (int jp = 0; jp < NB; jp += NR) kernel1(a, r * k + k0, b, jp, kc, acc, (r - r0) * NB + jp);
        }
        for (int r = r0; r < r1; r++) {
            int ai = (r - r0) * NB, oi = r * n + j0;
            float rs = rowScale[r];
            for (int j = 0; j < cols; j++) {
                out[oi + j] = (float) acc[ai + j] * (rs * p.scale(j0 + j));
                if (accOut != null) accOut[oi + j] = acc[ai + j];
            }
        }
    }

    /** Widens weight rows {@code k0 .. k0+kc}, columns {@code j0 .. j0+cols}, less their zero points, into b (kc, NB). */
    private static void widen(byte[] w, int n, int k0, int kc, int j0, int cols, float[] zero, float[] b) {
        for (int kk = 0; kk < kc; kk++) {
            int wi = (k0 + kk) * n + j0, bi = kk * NB;
            for (int j = 0; j < cols; j++) b[bi + j] = w[wi + j] - zero[j];
            for (int j = cols; j < NB; j++) b[bi + j] = 0f;
        }
    }

    /** Rows {@code a[ai + r*lda ..]} (4 of them) times b's columns {@code jp .. jp+NR} over kc, added to acc (width NB). */
    private static void kernel4(float[] a, int ai, int lda, float[] b, int jp, int kc, int[] acc, int ci) {
        FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP);
        FloatVector c10 = FloatVector.zero(SP), c11 = FloatVector.zero(SP);
        FloatVector c20 = FloatVector.zero(SP), c21 = FloatVector.zero(SP);
        FloatVector c30 = FloatVector.zero(SP), c31 = FloatVector.zero(SP);
        int a1 = ai + lda, a2 = a1 + lda, a3 = a2 + lda;
        for (int kk = 0; kk < kc; kk++) {
            int bi = kk * NB + jp;
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
        }
        addInt(c00, acc, ci);
        addInt(c01, acc, ci + VL);
        addInt(c10, acc, ci + NB);
        addInt(c11, acc, ci + NB + VL);
        addInt(c20, acc, ci + 2 * NB);
        addInt(c21, acc, ci + 2 * NB + VL);
        addInt(c30, acc, ci + 3 * NB);
        addInt(c31, acc, ci + 3 * NB + VL);
    }

    private static void kernel1(float[] a, int ai, float[] b, int jp, int kc, int[] acc, int ci) {
        FloatVector c0 = FloatVector.zero(SP), c1 = FloatVector.zero(SP);
        for (int kk = 0; kk < kc; kk++) {
            int bi = kk * NB + jp;
            FloatVector x = FloatVector.broadcast(SP, a[ai + kk]);
            c0 = x.fma(FloatVector.fromArray(SP, b, bi), c0);
            c1 = x.fma(FloatVector.fromArray(SP, b, bi + VL), c1);
        }
        addInt(c0, acc, ci);
        addInt(c1, acc, ci + VL);
    }

    /** acc[i ..] += the exact integers held by c (float to int32 is exact: |c| < 2^24). */
    private static void addInt(FloatVector c, int[] acc, int i) {
        IntVector v = (IntVector) c.convertShape(VectorOperators.F2I, IS, 0);
        IntVector.fromArray(IS, acc, i).add(v).intoArray(acc, i);
    }
}
