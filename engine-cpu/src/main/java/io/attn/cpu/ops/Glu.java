package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * GLU: {@code out[r, j] = act(a[r, j]) * g[r, j]}, {@code a} and {@code g} the two halves of row r of x {@code (..., 2F)}
 * (which half is activated: {@link OpParams.Glu#activatedFirst}). GELU is {@link Gelu#range} (the GELU op's and the
 * GEMM epilogue's arithmetic) on the activated half copied into the output row, then the product with the gate half;
 * SiLU is vectorised here: {@code a sigmoid(a)} with {@code e = exp(-|a|)} ({@link VExp#exp} of a non-positive
 * argument, no overflow), {@code sigmoid = 1/(1+e)} for {@code a >= 0}, {@code e/(1+e)} below (a few ulp; the SILU op
 * computes {@code exp} in double, scalar). Every element goes through the vector code (a row's tail through a
 * zero-padded copy), so a value does not depend on where its row starts.
 *
 * <p>Not fused into the GEMM: the CPU's epilogue works on one micro-tile of columns, and an output column j needs
 * columns j and j + F of the product, which lie in different column blocks (docs/design.md).
 */
public final class Glu {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    private Glu() {}

    public static void run(Parallel par, Node node, float[] out, float[] x) {
        OpParams.Glu p = node.params(OpParams.Glu.class);
        int f = node.shape().dim(-1), rows = node.shape().leading(1);
        par.forRange(rows, Math.max(1, Elementwise.GRAIN / 4 / Math.max(1, f)), (from, to) -> {
            float[] ta = new float[SP.length()], tg = new float[SP.length()];
            for (int r = from; r < to; r++) {
                int a = r * 2 * f + (p.activatedFirst() ? 0 : f), g = r * 2 * f + (p.activatedFirst() ? f : 0);
                int o = r * f;
                switch (p.act()) {
                    case SILU -> silu(out, o, x, a, g, f, ta, tg);
                    case GELU, GELU_TANH -> {
                        System.arraycopy(x, a, out, o, f);
                        Gelu.range(out, out, o, o + f, p.act() == OpParams.Glu.Activation.GELU_TANH);
                        int j = 0;
                        for (int ub = SP.loopBound(f); j < ub; j += SP.length())
                            FloatVector.fromArray(SP, out, o + j)
                                    .mul(FloatVector.fromArray(SP, x, g + j))
                                    .intoArray(out, o + j);
                        for (; j < f; j++) out[o + j] *= x[g + j];
                    }
                }
            }
        });
    }

    /** {@code out[o + j] = silu(x[a + j]) * x[g + j]} for {@code j < f}; {@code ta}, {@code tg} one vector each. */
    private static void silu(float[] out, int o, float[] x, int a, int g, int f, float[] ta, float[] tg) {
        int j = 0;
        for (int ub = SP.loopBound(f); j < ub; j += SP.length())
            siluVector(FloatVector.fromArray(SP, x, a + j), FloatVector.fromArray(SP, x, g + j))
                    .intoArray(out, o + j);
        if (j < f) {
            java.util.Arrays.fill(ta, 0f);
            java.util.Arrays.fill(tg, 0f);
            System.arraycopy(x, a + j, ta, 0, f - j);
            System.arraycopy(x, g + j, tg, 0, f - j);
            siluVector(FloatVector.fromArray(SP, ta, 0), FloatVector.fromArray(SP, tg, 0))
                    .intoArray(ta, 0);
            System.arraycopy(ta, 0, out, o + j, f - j);
        }
    }

    private static FloatVector siluVector(FloatVector v, FloatVector gate) {
        FloatVector e = VExp.exp(v.abs().neg());
        FloatVector d = e.add(1f);
        FloatVector sig = FloatVector.broadcast(SP, 1f)
                .blend(e, v.compare(VectorOperators.LT, 0f))
                .div(d);
        return v.mul(sig).mul(gate);
    }
}
