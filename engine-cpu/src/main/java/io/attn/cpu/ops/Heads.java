package io.attn.cpu.ops;

import io.attn.cpu.Parallel;
import io.attn.graph.Node;
import io.attn.tensor.Shape;

/**
 * SPLIT_HEADS and MERGE_HEADS ({@code (B, L, H*D) <-> (B, H, L, D)}): pure data movement with {@link
 * System#arraycopy} of contiguous head rows.
 */
public final class Heads {
    private Heads() {}

    /** Elements per task at least (small copies stay on the calling thread). */
    private static final int GRAIN = 1 << 16;

    /** {@code (B, L, H*D) -> (B, H, L, D)}, one (batch, head) per task. */
    public static void splitHeads(Parallel par, Node node, float[] out, float[] x) {
        Shape s = node.shape();
        int h = s.dim(1), l = s.dim(2), d = s.dim(3);
        par.forRange(s.dim(0) * h, Math.max(1, GRAIN / Math.max(1, l * d)), (from, to) -> {
            for (int bh = from; bh < to; bh++) {
                int bb = bh / h, hh = bh % h;
                for (int ll = 0; ll < l; ll++)
                    System.arraycopy(x, (bb * l + ll) * h * d + hh * d, out, (bh * l + ll) * d, d);
            }
        });
    }

    /** {@code (B, H, L, D) -> (B, L, H*D)}, one (batch, head) per task. */
    public static void mergeHeads(Parallel par, Node node, float[] out, float[] x) {
        Shape s = node.input(0).shape();
        int h = s.dim(1), l = s.dim(2), d = s.dim(3);
        par.forRange(s.dim(0) * h, Math.max(1, GRAIN / Math.max(1, l * d)), (from, to) -> {
            for (int bh = from; bh < to; bh++) {
                int bb = bh / h, hh = bh % h;
                for (int ll = 0; ll < l; ll++)
                    System.arraycopy(x, (bh * l + ll) * d, out, (bb * l + ll) * h * d + hh * d, d);
            }
        });
    }
}
