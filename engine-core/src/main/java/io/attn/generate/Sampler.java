package io.attn.generate;

import java.util.Arrays;
import java.util.Random;

/**
 * Picks the next token from logits: greedy (arg-max, lowest id on ties) when {@code temperature == 0}; otherwise
 * samples from {@code softmax(logits / temperature)} restricted to the {@code topK} most likely tokens ({@code 0}: no
 * limit) and then to the smallest set of most likely tokens whose probability reaches {@code topP} ({@code 1}: no
 * limit). Draws come from a {@link Random} seeded with {@code seed}, so the same seed gives the same tokens. Not
 * thread-safe.
 */
public final class Sampler {
    private final double temperature, topP;
    private final int topK;
    private final Random random;

    public Sampler(double temperature, int topK, double topP, long seed) {
        if (!(temperature >= 0) || Double.isInfinite(temperature))
            throw new IllegalArgumentException("temperature must be >= 0, got " + temperature);
        if (topK < 0) throw new IllegalArgumentException("top-k must be >= 0, got " + topK);
        if (!(topP > 0 && topP <= 1)) throw new IllegalArgumentException("top-p must be in (0, 1], got " + topP);
        this.temperature = temperature;
        this.topK = topK;
        this.topP = topP;
        this.random = new Random(seed);
    }

    public static Sampler greedy() {
        return new Sampler(0, 0, 1, 0);
    }

    public boolean isGreedy() {
        return temperature == 0;
    }

    public int sample(float[] logits) {
        if (temperature == 0) return argmax(logits);
        int v = logits.length;
        Integer[] order = new Integer[v];
        for (int i = 0; i < v; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Float.compare(logits[b], logits[a])); // stable: lower id first on ties
        int keep = topK > 0 ? Math.min(topK, v) : v;
        double max = logits[order[0]];
        double[] p = new double[keep];
        double sum = 0;
        for (int i = 0; i < keep; i++) sum += p[i] = Math.exp((logits[order[i]] - max) / temperature);
        if (topP < 1) {
            double cum = 0;
            int n = 0;
            while (n < keep) {
                cum += p[n++] / sum;
                if (cum >= topP) break;
            }
            keep = n;
            sum = 0;
            for (int i = 0; i < keep; i++) sum += p[i];
        }
        double u = random.nextDouble() * sum;
        for (int i = 0; i < keep; i++) {
            u -= p[i];
            if (u < 0) return order[i];
        }
        return order[keep - 1];
    }

    static int argmax(float[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
        return best;
    }
}
