import jdk.incubator.vector.*;

/**
 * Does a 64-byte vector load that straddles two cache lines cost more on this CPU, and does it matter to a GEMM-like
 * register tile? Java arrays start 16 bytes after an 8-byte-aligned object (compressed class pointers), so where a
 * float[]'s 512-bit loads fall relative to cache lines depends on where the collector put the array: most 64-byte
 * loads of a heap array straddle two lines unless the array happens to sit 48 bytes past a 64-byte boundary, and the
 * collector may move it. This times (wall clock, one thread, data in L1) (1) a load-bound loop of 4 vector loads and 4
 * adds per step and (2) a 6 x 2-vector FMA tile (2 loads, 6 broadcasts, 12 FMAs per step), each starting at element
 * offsets 0, 2, ..., 14 of the same array, so one offset per round has every load inside one line. No dependency on
 * attn; with a JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/AlignProbe.java
 * </pre>
 *
 * Measured 2026-12-04 on AMD EPYC family 26 model 2 (Zen 5, 512-bit vectors): the load-bound loop 0.16-0.19 ns per
 * vector load at the one aligned offset (offset 12, then 4 after a collection moved the array) against 0.33-0.36 at
 * every other offset, 2x; the FMA tile 210-213 GFLOP/s at every offset (its loads are not its bound). So split loads
 * halve load-bound loops (softmax, normalisation, P.V's accumulator traffic, packing) and leave GEMM tiles alone. An
 * engine on heap arrays cannot choose the alignment: the collector places and moves them, and the JDK has no supported
 * way to read an array's address (documented in docs/performance.md, "Partial key tiles and sliding windows").
 */
public class AlignProbe {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  // dot-like kernel with 4 loads of a per step and broadcast of b: load-bound
  static float loads(float[] a, int off, int n, int reps) {
    FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
    int L = S.length();
    for (int r = 0; r < reps; r++)
      for (int i = off; i < off + n; i += 4 * L) {
        s0 = s0.add(FloatVector.fromArray(S, a, i));
        s1 = s1.add(FloatVector.fromArray(S, a, i + L));
        s2 = s2.add(FloatVector.fromArray(S, a, i + 2 * L));
        s3 = s3.add(FloatVector.fromArray(S, a, i + 3 * L));
      }
    return s0.add(s1).add(s2).add(s3).reduceLanes(VectorOperators.ADD);
  }
  // gemm-like: 2 vector loads of B, 6 broadcasts of A, 12 FMAs per k
  static float gemm(float[] b, int off, float[] a, int k, int reps) {
    int L = S.length();
    FloatVector c00=FloatVector.zero(S),c01=c00,c10=c00,c11=c00,c20=c00,c21=c00,c30=c00,c31=c00,c40=c00,c41=c00,c50=c00,c51=c00;
    for (int r = 0; r < reps; r++)
      for (int p = 0; p < k; p++) {
        FloatVector b0 = FloatVector.fromArray(S, b, off + p * 2 * L), b1 = FloatVector.fromArray(S, b, off + p * 2 * L + L);
        int q = p * 6;
        FloatVector x;
        x = FloatVector.broadcast(S, a[q]); c00 = x.fma(b0, c00); c01 = x.fma(b1, c01);
        x = FloatVector.broadcast(S, a[q+1]); c10 = x.fma(b0, c10); c11 = x.fma(b1, c11);
        x = FloatVector.broadcast(S, a[q+2]); c20 = x.fma(b0, c20); c21 = x.fma(b1, c21);
        x = FloatVector.broadcast(S, a[q+3]); c30 = x.fma(b0, c30); c31 = x.fma(b1, c31);
        x = FloatVector.broadcast(S, a[q+4]); c40 = x.fma(b0, c40); c41 = x.fma(b1, c41);
        x = FloatVector.broadcast(S, a[q+5]); c50 = x.fma(b0, c50); c51 = x.fma(b1, c51);
      }
    return c00.add(c01).add(c10).add(c11).add(c20).add(c21).add(c30).add(c31).add(c40).add(c41).add(c50).add(c51).reduceLanes(VectorOperators.ADD);
  }
  public static void main(String[] args) {
    int n = 4096; float[] a = new float[n + 64]; for (int i = 0; i < a.length; i++) a[i] = i % 7;
    int k = 256; float[] b = new float[k * 2 * S.length() + 64]; float[] aa = new float[k * 6]; 
    float sink = 0;
    for (int round = 0; round < 3; round++) {
      StringBuilder sb = new StringBuilder("loads ns/vector-load by offset: ");
      for (int off = 0; off < 16; off += 2) {
        for (int w = 0; w < 200; w++) sink += loads(a, off, n, 10);
        long t = System.nanoTime(); int reps = 20000; sink += loads(a, off, n, reps); long dt = System.nanoTime() - t;
        sb.append(String.format("%d:%.3f ", off, dt / (double) reps / (n / S.length())));
      }
      System.out.println(sb);
      sb = new StringBuilder("gemm GFLOP/s by offset: ");
      for (int off = 0; off < 16; off += 2) {
        for (int w = 0; w < 200; w++) sink += gemm(b, off, aa, k, 10);
        long t = System.nanoTime(); int reps = 20000; sink += gemm(b, off, aa, k, reps); long dt = System.nanoTime() - t;
        sb.append(String.format("%d:%.1f ", off, 2.0 * 12 * S.length() * k * reps / dt));
      }
      System.out.println(sb);
    }
    System.out.println(sink);
  }
}
