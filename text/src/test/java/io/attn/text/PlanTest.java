package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The batch planner against brute force: on small random sets of lengths, its cost (padded tokens plus the per-batch
 * overhead) equals the best over every split of the sorted order, and every batch keeps within the limits.
 */
class PlanTest {
    @Test
    void plansAreOptimalAndWithinTheLimits() {
        SplittableRandom r = new SplittableRandom(3);
        for (int trial = 0; trial < 300; trial++) {
            int n = 1 + r.nextInt(11), maxSize = 1 + r.nextInt(6), maxLen = 2 + r.nextInt(60);
            int budget = maxLen + r.nextInt(200);
            TextTokenizer.Tokens[] toks = new TextTokenizer.Tokens[n];
            for (int i = 0; i < n; i++) toks[i] = new TextTokenizer.Tokens(new int[2 + r.nextInt(maxLen - 1)], false);
            Embedder.Plan p = Embedder.plan(toks, maxSize, budget);
            int[] len =
                    Arrays.stream(p.order()).mapToInt(i -> toks[i].ids().length).toArray();
            for (int i = 1; i < n; i++) assertTrue(len[i - 1] <= len[i], "sorted");
            boolean[] seen = new boolean[n];
            for (Integer i : p.order()) seen[i] = true;
            for (boolean s : seen) assertTrue(s, "every text once");
            long cost = 0;
            int next = 0;
            for (int[] b : p.batches()) {
                assertEquals(next, b[0], "contiguous");
                next = b[1];
                int size = b[1] - b[0];
                assertEquals(len[b[1] - 1], b[2], "padded to the longest");
                assertTrue(size <= maxSize, "batch size");
                assertTrue(size == 1 || (long) size * b[2] <= budget, "token budget");
                cost += (long) size * b[2] + Embedder.BATCH_OVERHEAD_TOKENS;
            }
            assertEquals(n, next);
            assertEquals(best(len, 0, maxSize, budget), cost, "trial " + trial + " lengths " + Arrays.toString(len));
        }
    }

    /** The cheapest split of len[from..] into contiguous batches, by exhaustive recursion. */
    private static long best(int[] len, int from, int maxSize, int budget) {
        if (from == len.length) return 0;
        long b = Long.MAX_VALUE;
        for (int to = from + 1; to <= len.length && to - from <= maxSize; to++) {
            int size = to - from;
            if (size > 1 && (long) size * len[to - 1] > budget) break;
            b = Math.min(
                    b, (long) size * len[to - 1] + Embedder.BATCH_OVERHEAD_TOKENS + best(len, to, maxSize, budget));
        }
        return b;
    }

    @Test
    void aLongTextAloneIsItsOwnBatch() {
        TextTokenizer.Tokens[] toks = {
            new TextTokenizer.Tokens(new int[300], false), new TextTokenizer.Tokens(new int[5], false)
        };
        List<int[]> b = Embedder.plan(toks, 64, 256).batches();
        assertEquals(2, b.size());
    }
}
