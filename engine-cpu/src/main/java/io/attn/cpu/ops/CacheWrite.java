package io.attn.cpu.ops;

import io.attn.AttnException;
import io.attn.graph.Node;
import io.attn.tensor.Shape;

/**
 * CACHE_WRITE: rows {@code pos .. pos+L-1} of every (batch, head) of the cache {@code (B, H, C, D)} take the rows of
 * {@code x (B, H, L, D)}. In place when the output is the cache's own array (the executor's case); otherwise the cache
 * is copied to the output first. Pure data movement ({@link System#arraycopy} of contiguous head rows).
 */
public final class CacheWrite {
    private CacheWrite() {}

    public static void run(Node node, float[] out, float[] cache, float[] x, float[] pos) {
        Shape sc = node.input(0).shape(), sx = node.input(1).shape();
        int bh = sc.dim(0) * sc.dim(1), c = sc.dim(2), d = sc.dim(3), l = sx.dim(2);
        float p = pos[0];
        if (!(p >= 0f && p + l <= c) || p != Math.rint(p))
            throw AttnException.badInput(
                    "cache position " + p + " is not an integer in [0, " + (c - l) + "] (cache of " + c + " rows)");
        if (out != cache) System.arraycopy(cache, 0, out, 0, sc.size());
        int start = (int) p;

        for (int i = 0; i < bh; i++) System.arraycopy(x, i * l * d, out, (i * c + start) * d, l * d);
    }
}
