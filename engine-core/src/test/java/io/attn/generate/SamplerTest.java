package io.attn.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Sampling against hand-worked distributions. Logits {@code (0, ln 2, ln 4)} give softmax {@code (1, 2, 4) / 7}. Counts
 * of N = 40000 draws are compared with N p within 5 standard deviations ({@code sqrt(N p (1 - p))}, about 100 here):
 * a wrong filter or temperature moves a count by thousands, while a correct sampler fails this with probability
 * ~1e-6.
 */
class SamplerTest {
    static final float[] LOGITS = {0f, (float) Math.log(2), (float) Math.log(4)};
    static final int N = 40000;

    static void distribution(Sampler s, double... p) {
        int[] count = new int[p.length];
        for (int i = 0; i < N; i++) count[s.sample(LOGITS)]++;
        for (int i = 0; i < p.length; i++) {
            double sd = Math.sqrt(N * p[i] * (1 - p[i]));
            assertTrue(
                    Math.abs(count[i] - N * p[i]) <= 5 * sd + 1e-9,
                    "token " + i + ": " + count[i] + " draws, expected " + N * p[i]);
        }
    }

    @Test
    void greedyIsArgmaxWithLowestIdOnTies() {
        assertEquals(2, Sampler.greedy().sample(LOGITS));
        assertEquals(1, Sampler.greedy().sample(new float[] {-1f, 3f, 3f, 2f}));
    }

    @Test
    void temperatureOneSamplesTheSoftmax() {
        distribution(new Sampler(1, 0, 1, 1), 1 / 7.0, 2 / 7.0, 4 / 7.0);
    }

    @Test
    void temperatureTwoFlattens() {
        double s = 1 + Math.sqrt(2) + 2; // exp(l / 2) = 1, sqrt 2, 2
        distribution(new Sampler(2, 0, 1, 2), 1 / s, Math.sqrt(2) / s, 2 / s);
    }

    @Test
    void topKKeepsTheKMostLikely() {
        distribution(new Sampler(1, 2, 1, 3), 0, 1 / 3.0, 2 / 3.0);
        for (int i = 0; i < 100; i++) assertEquals(2, new Sampler(1, 1, 1, i).sample(LOGITS));
    }

    @Test
    void topPKeepsTheSmallestSetReachingP() {
        // 4/7 = 0.571 < 0.6: the next most likely (2/7) joins; 0.5 needs the first only
        distribution(new Sampler(1, 0, 0.6, 4), 0, 1 / 3.0, 2 / 3.0);
        distribution(new Sampler(1, 0, 0.5, 5), 0, 0, 1);
    }

    @Test
    void aSeedReproducesTheDraws() {
        Sampler a = new Sampler(1.3, 0, 0.9, 42), b = new Sampler(1.3, 0, 0.9, 42);
        for (int i = 0; i < 200; i++) assertEquals(a.sample(LOGITS), b.sample(LOGITS));
    }

    @Test
    void badOptionsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new Sampler(-1, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new Sampler(1, -1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new Sampler(1, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new Sampler(1, 0, 1.5, 0));
    }
}
