import jdk.incubator.vector.*;

/**
 * Can an exact int8 product beat the fp32 FMA from Java on a CPU with AVX-512 VNNI (issue 37, docs/performance.md
 * "int8 GEMM and the -q models")? HotSpot's C2 has a node for the pairwise short multiply-add ({@code MulAddS2I},
 * {@code vpmaddwd}, fused with the add into {@code vpdpwssd} where VNNI is present), matched when a loop has the shape
 * {@code s += a[2i] * b[2i] + a[2i + 1] * b[2i + 1]}; the Vector API has no such operation. This times, on one
 * thread by its CPU time, a 48 x 384 x 384 product of uint8-range by int8-range values five ways in scalar Java loops
 * that C2 may auto-vectorize (plain and pairwise short dot products, the pairwise form storing to an int array, a
 * byte u8 x s8 dot product, four rows sharing the weights) against the fp32 6 x 2-vector FMA tile that
 * {@code QMatMul} runs on the widened values, and prints GMAC/s per round. No dependency on attn; with a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/VnniProbe.java
 * </pre>
 *
 * Measured 2026-12-04 on AMD EPYC family 26 model 2 (Zen 5, avx512f, avx512_vnni, avx_vnni): the fp32 tile 88-92
 * GMAC/s, every integer loop 1.9-2.2 GMAC/s (scalar code: the reductions were not vectorized), the store form 4.6-4.9
 * (its broadcast pairs, rebuilt per k step, cost as much as the products; the shape needs one operand replicated per
 * output, so it cannot make a GEMM faster either).
 */
public class VnniProbe {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final int VL = SP.length();

    // (a) plain short reduction
    static int dotA(short[] a, int ao, short[] b, int bo, int n) {
        int s = 0;
        for (int i = 0; i < n; i++) s += a[ao + i] * b[bo + i];
        return s;
    }
    // (b) pairwise short reduction (MulAddS2I shape)
    static int dotB(short[] a, int ao, short[] b, int bo, int n) {
        int s = 0;
        for (int i = 0; i < n / 2; i++) s += a[ao + 2 * i] * b[bo + 2 * i] + a[ao + 2 * i + 1] * b[bo + 2 * i + 1];
        return s;
    }
    // (c) store form: out[i] += pairwise, A pair broadcast arrays (GEMM-like rows over n)
    static void rowC(int[] out, int oo, short[] aPair, short[] b, int bo, int n) {
        for (int i = 0; i < n; i++) out[oo + i] += aPair[2 * i] * b[bo + 2 * i] + aPair[2 * i + 1] * b[bo + 2 * i + 1];
    }
    // (d) byte u8 x s8 reduction
    static int dotD(byte[] a, int ao, byte[] b, int bo, int n) {
        int s = 0;
        for (int i = 0; i < n; i++) s += (a[ao + i] & 0xff) * b[bo + i];
        return s;
    }
    // (e) four rows sharing b, pairwise
    static void dot4(short[] a, int ao, int lda, short[] b, int bo, int n, int[] r, int ro) {
        int s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int a1 = ao + lda, a2 = a1 + lda, a3 = a2 + lda;
        for (int i = 0; i < n; i++) {
            int bb = b[bo + i];
            s0 += a[ao + i] * bb;
            s1 += a[a1 + i] * bb;
            s2 += a[a2 + i] * bb;
            s3 += a[a3 + i] * bb;
        }
        r[ro] = s0; r[ro + 1] = s1; r[ro + 2] = s2; r[ro + 3] = s3;
    }

    // fp32 6x2 kernel like QMatMul.kernel6 over a packed panel
    static void kernel6(float[] a, int ai, int lda, float[] b, int pb, int kc, float[] sums, int ci, int NB) {
        int NR = 2 * VL;
        FloatVector c00 = FloatVector.zero(SP), c01 = FloatVector.zero(SP), c10 = FloatVector.zero(SP), c11 = FloatVector.zero(SP),
            c20 = FloatVector.zero(SP), c21 = FloatVector.zero(SP), c30 = FloatVector.zero(SP), c31 = FloatVector.zero(SP),
            c40 = FloatVector.zero(SP), c41 = FloatVector.zero(SP), c50 = FloatVector.zero(SP), c51 = FloatVector.zero(SP);
        int a1 = ai + lda, a2 = a1 + lda, a3 = a2 + lda, a4 = a3 + lda, a5 = a4 + lda;
        for (int kk = 0; kk < kc; kk++) {
            int bi = pb + kk * NR;
            FloatVector b0 = FloatVector.fromArray(SP, b, bi), b1 = FloatVector.fromArray(SP, b, bi + VL);
            FloatVector x = FloatVector.broadcast(SP, a[ai + kk]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SP, a[a1 + kk]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SP, a[a2 + kk]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SP, a[a3 + kk]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SP, a[a4 + kk]); c40 = x.fma(b0, c40); c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SP, a[a5 + kk]); c50 = x.fma(b0, c50); c51 = x.fma(b1, c51);
        }
        c00.intoArray(sums, ci); c01.intoArray(sums, ci + VL); c10.intoArray(sums, ci + NB); c11.intoArray(sums, ci + NB + VL);
        c20.intoArray(sums, ci + 2 * NB); c21.intoArray(sums, ci + 2 * NB + VL); c30.intoArray(sums, ci + 3 * NB); c31.intoArray(sums, ci + 3 * NB + VL);
        c40.intoArray(sums, ci + 4 * NB); c41.intoArray(sums, ci + 4 * NB + VL); c50.intoArray(sums, ci + 5 * NB); c51.intoArray(sums, ci + 5 * NB + VL);
    }

    static long sink;
    static double cpu() { return java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() * 1e-9; }

    public static void main(String[] args) {
        int M = 48, K = 384, N = 384;
        java.util.Random rnd = new java.util.Random(1);
        short[] as = new short[M * K], bs = new short[N * K];
        byte[] ab = new byte[M * K], bb = new byte[N * K];
        for (int i = 0; i < as.length; i++) { as[i] = (short) rnd.nextInt(256); ab[i] = (byte) as[i]; }
        for (int i = 0; i < bs.length; i++) { bs[i] = (short) (rnd.nextInt(256) - 128); bb[i] = (byte) bs[i]; }
        float[] af = new float[M * K], bf = new float[K * N], sums = new float[M * N];
        for (int i = 0; i < af.length; i++) af[i] = as[i];
        for (int i = 0; i < bf.length; i++) bf[i] = bs[i];
        int[] out = new int[M * N];
        short[] aPair = new short[2 * N];
        int[] r4 = new int[4];
        double macs = (double) M * K * N;
        String[] names = {"fp32 kernel6", "a: short s+=a*b", "b: short pairwise", "c: store pairwise", "d: u8*s8 byte", "e: 4 rows short"};
        for (int round = 0; round < 8; round++) {
            StringBuilder sb = new StringBuilder("round " + round + ":");
            for (int v = 0; v < names.length; v++) {
                double best = 1e9;
                for (int rep = 0; rep < 20; rep++) {
                    double t0 = cpu();
                    long s = 0;
                    switch (v) {
                        case 0 -> { int NR = 2 * VL; for (int jp = 0; jp < N; jp += NR) for (int r = 0; r + 6 <= M; r += 6) kernel6(af, r * K, K, bf, jp * K, K, sums, r * N + jp, N); }
                        case 1 -> { for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) s += dotA(as, m * K, bs, n * K, K); }
                        case 2 -> { for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) s += dotB(as, m * K, bs, n * K, K); }
                        case 3 -> { for (int m = 0; m < M; m++) for (int kp = 0; kp < K / 2; kp++) {
                                        short x0 = as[m * K + 2 * kp], x1 = as[m * K + 2 * kp + 1];
                                        for (int n = 0; n < N; n++) { aPair[2 * n] = x0; aPair[2 * n + 1] = x1; }
                                        rowC(out, m * N, aPair, bs, kp * 2 * N, N); } }
                        case 4 -> { for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) s += dotD(ab, m * K, bb, n * K, K); }
                        case 5 -> { for (int m = 0; m < M; m += 4) for (int n = 0; n < N; n++) { dot4(as, m * K, K, bs, n * K, K, r4, 0); s += r4[0] + r4[3]; } }
                    }
                    sink += s;
                    best = Math.min(best, cpu() - t0);
                }
                sb.append(String.format(" %s %.1f GMAC/s;", names[v], macs / best * 1e-9));
            }
            System.out.println(sb);
        }
    }
}
