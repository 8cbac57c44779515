package io.attn.cpu.ops;

import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/** MEAN over one axis: {@code out[o, i] = sum_a x[o, a, i] / n}, vectorised along the inner (contiguous) dims. */
public final class Mean {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;

    private Mean() {}

    public static void run(Node node, float[] out, float[] x) {
        int axis = node.params(OpParams.Mean.class).axis();
        Shape s = node.input(0).shape();
        int outer = 1, inner = 1, n = s.dim(axis);
        for (int i = 0; i < axis; i++) outer *= s.dim(i);
        for (int i = axis + 1; i < s.rank(); i++) inner *= s.dim(i);
        float inv = n == 0 ? Float.NaN : 1f / n;
        for (int o = 0; o < outer; o++) {
            int dst = o * inner, src = o * n * inner;
            int i = 0;
            for (int ub = SP.loopBound(inner); i < ub; i += SP.length()) {
                FloatVector acc = FloatVector.zero(SP);
                for (int a = 0; a < n; a++) acc = acc.add(FloatVector.fromArray(SP, x, src + a * inner + i));
                acc.mul(inv).intoArray(out, dst + i);
            }
            for (; i < inner; i++) {
                float acc = 0f;
                for (int a = 0; a < n; a++) acc += x[src + a * inner + i];
                out[dst + i] = acc * inv;
            }
        }
    }
}
