import jdk.incubator.vector.*;

/**
 * The softmax's base-2 exponential ({@code io.attn.cpu.ops.VExp.exp2}) with and without the clamp of its argument that
 * it had until 2026-11-26 (issue 19, docs/performance.md "The exponentials without their clamp"): whether dropping it
 * changes any result bit (16 million random arguments in [-140, 0] and the special values), and its time in a
 * softmax-shaped loop (2^(s - max) stored and summed, one row of 4096 scores). No dependency on attn; run it with a
 * JDK 25:
 *
 * <pre>
 *   java --add-modules jdk.incubator.vector benchmarks/probes/ExpProbe.java
 * </pre>
 */
public class ExpProbe {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    static final float ROUND = 12582912f, X2_MIN = -125f;
    static final float Q1 = 0.6931471824645996f, Q2 = 0.24022647738456726f, Q3 = 0.055503323674201965f;
    static final float Q4 = 0.00961843691766262f, Q5 = 0.0013398875016719103f, Q6 = 0.00015353360504377633f;

    /** The engine's exp2; {@code clamp}: the argument first raised to X2_MIN, as before. */
    static FloatVector exp2(FloatVector x, boolean clamp) {
        VectorMask<Float> under = x.compare(VectorOperators.LT, X2_MIN);
        FloatVector xc = clamp ? x.blend(X2_MIN, under) : x;
        FloatVector t = xc.add(ROUND);
        FloatVector f = xc.sub(t.sub(ROUND));
        FloatVector p = f.fma(Q6, Q5);
        p = p.fma(f, FloatVector.broadcast(SP, Q4));
        p = p.fma(f, FloatVector.broadcast(SP, Q3));
        p = p.fma(f, FloatVector.broadcast(SP, Q2));
        p = p.fma(f, FloatVector.broadcast(SP, Q1));
        p = p.fma(f, FloatVector.broadcast(SP, 1f));
        IntVector e = ((IntVector) t.reinterpretAsInts()).lanewise(VectorOperators.LSHL, 23).add(127 << 23);
        return p.mul(e.reinterpretAsFloats()).blend(0f, under);
    }

    static float row(float[] out, float[] s, float max, boolean clamp) {
        FloatVector m = FloatVector.broadcast(SP, max), sum = FloatVector.zero(SP);
        for (int i = 0; i < s.length; i += SP.length()) {
            FloatVector e = exp2(FloatVector.fromArray(SP, s, i).sub(m), clamp);
            sum = sum.add(e);
            e.intoArray(out, i);
        }
        return sum.reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] args) {
        int vl = SP.length();
        float[] in = new float[vl], a = new float[vl], b = new float[vl];
        java.util.Random r = new java.util.Random(3);
        long differ = 0, n = 0;
        for (int i = 0; i < 16_000_000 / vl; i++) {
            for (int j = 0; j < vl; j++) in[j] = (float) (-140 * r.nextDouble());
            exp2(FloatVector.fromArray(SP, in, 0), true).intoArray(a, 0);
            exp2(FloatVector.fromArray(SP, in, 0), false).intoArray(b, 0);
            for (int j = 0; j < vl; j++, n++) if (Float.floatToRawIntBits(a[j]) != Float.floatToRawIntBits(b[j])) differ++;
        }
        float[] special = {Float.NEGATIVE_INFINITY, -Float.MAX_VALUE, -1e30f, -5e6f, -125.5f, -125f, Float.NaN, 0f};
        for (int j = 0; j < special.length; j += vl) {
            int len = Math.min(vl, special.length - j);
            java.util.Arrays.fill(in, 0f);
            System.arraycopy(special, j, in, 0, len);
            exp2(FloatVector.fromArray(SP, in, 0), true).intoArray(a, 0);
            exp2(FloatVector.fromArray(SP, in, 0), false).intoArray(b, 0);
            for (int l = 0; l < len; l++, n++)
                if (Float.floatToRawIntBits(a[l]) != Float.floatToRawIntBits(b[l])) differ++;
        }
        System.out.printf("%d arguments, %d results differ bitwise%n", n, differ);
        float[] s = new float[4096], out = new float[4096];
        for (int i = 0; i < s.length; i++) s[i] = (float) (r.nextGaussian() * 3);
        float sink = 0;
        for (int round = 0; round < 5; round++)
            for (boolean clamp : new boolean[] {true, false}) {
                long t0 = System.nanoTime();
                for (int i = 0; i < 20_000; i++) sink += row(out, s, 9f, clamp);
                double ns = (System.nanoTime() - t0) / 20_000.0 / (s.length / vl);
                if (round >= 2) System.out.printf("round %d %-10s %.2f ns per %d-float vector%n", round, clamp ? "clamp" : "no clamp", ns, vl);
            }
        if (sink == 42) System.out.println();
    }
}
