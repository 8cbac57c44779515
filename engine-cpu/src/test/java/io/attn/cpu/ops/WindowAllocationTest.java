package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cpu.Parallel;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A sliding window is a rule, not an {@code (L, S)} mask: the CPU attention over L = S = 4096 with a window of 32 keys
 * on either side allocates nothing of the size of the scores (64 MiB for one head), measured by the JVM's per-thread
 * allocation counter on one thread (Parallel(1) runs every task on the caller), once the kernels are compiled. Correctness is the parity suite's
 * ("attention window" cases).
 */
class WindowAllocationTest {
    @Test
    void windowedAttentionAllocatesNoScoreMatrix() {
        int l = 4096, d = 64;
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 1, l, d), k = g.input("k", 1, 1, l, d), v = g.input("v", 1, 1, l, d);
        Node o = g.attention(q, k, v, Float.NaN, MaskSpec.NONE.window(32, 32), null, null);
        SplittableRandom r = new SplittableRandom(3);
        float[][] in = new float[3][l * d];
        for (float[] a : in) for (int i = 0; i < a.length; i++) a[i] = (float) r.nextDouble(-1, 1);
        float[] out = new float[l * d];
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        long scores = (long) l * l * Float.BYTES, least = Long.MAX_VALUE;
        try (Parallel par = new Parallel(1)) {
            // until the JIT has compiled the kernels (before that the Vector API boxes every vector: hundreds of MB
            // of short-lived garbage per call), at most 120 calls (measured: 128 bytes a call from about the 80th
            // on); an (L, S) array would be allocated by every one
            for (int run = 0; run < 120 && least >= 1 << 20; run++) {
                long before = mx.getThreadAllocatedBytes(id);
                Attention.run(par, o, out, in);
                least = Math.min(least, mx.getThreadAllocatedBytes(id) - before);
            }
        }
        // an (L, S) float mask is 64 MiB, a byte one 16 MiB
        assertTrue(
                least < 8 << 20,
                "windowed attention allocated at least " + least + " bytes per call (one (L, S) score matrix is "
                        + scores + ")");
        for (float x : out) assertTrue(Float.isFinite(x));
    }
}
