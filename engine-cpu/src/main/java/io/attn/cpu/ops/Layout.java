package io.attn.cpu.ops;

import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.Shape;

/** SPLIT_HEADS, MERGE_HEADS and CONCAT: pure data movement with {@link System#arraycopy} of contiguous runs. */
public final class Layout {
    private Layout() {}

    /** {@code (B, L, H*D) -> (B, H, L, D)}. */
    public static void splitHeads(Node node, float[] out, float[] x) {
        Shape s = node.shape();
        int b = s.dim(0), h = s.dim(1), l = s.dim(2), d = s.dim(3);
        for (int bb = 0; bb < b; bb++)
            for (int hh = 0; hh < h; hh++)
                for (int ll = 0; ll < l; ll++)
                    System.arraycopy(x, (bb * l + ll) * h * d + hh * d, out, ((bb * h + hh) * l + ll) * d, d);
    }

    /** {@code (B, H, L, D) -> (B, L, H*D)}. */
    public static void mergeHeads(Node node, float[] out, float[] x) {
        Shape s = node.input(0).shape();
        int b = s.dim(0), h = s.dim(1), l = s.dim(2), d = s.dim(3);
        for (int bb = 0; bb < b; bb++)
            for (int hh = 0; hh < h; hh++)
                for (int ll = 0; ll < l; ll++)
                    System.arraycopy(x, ((bb * h + hh) * l + ll) * d, out, (bb * l + ll) * h * d + hh * d, d);
    }

    /** Concatenation of every input along the node's axis. */
    public static void concat(Node node, float[] out, float[][] in) {
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
