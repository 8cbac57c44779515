package io.attn.cpu.ops;

import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;

/** CONCAT: pure data movement with {@link System#arraycopy} of contiguous runs. */
public final class Concat {
    private Concat() {}

    /** Concatenation of every input along the node's axis. */
    public static void run(Node node, float[] out, float[][] in) {
        int axis = node.params(OpParams.Concat.class).axis();
        Shape s = node.shape();
        int outer = 1, inner = 1;
        for (int i = 0; i < axis; i++) outer *= s.dim(i);
        for (int i = axis + 1; i < s.rank(); i++) inner *= s.dim(i);
        int rowOut = s.dim(axis) * inner;
        int at = 0;
        for (int p = 0; p < in.length; p++) {
            int run = node.input(p).shape().dim(axis) * inner;
            for (int o = 0; o < outer; o++) System.arraycopy(in[p], o * run, out, o * rowOut + at, run);
            at += run;
        }
    }
}
