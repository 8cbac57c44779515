package io.attn.engine;

import io.attn.AttnException;

/**
 * How {@link LanguageModel#generate} picks tokens and when it stops.
 *
 * <ul>
 *   <li>{@code maxNewTokens}: at most this many new tokens per sequence ({@code >= 0});
 *   <li>{@code temperature}: {@code 0} is greedy (the most likely token, the lowest id on ties); above 0 the next token
 *       is drawn from {@code softmax(logits / temperature)}, restricted to the {@code topK} most likely tokens ({@code
 *       0}: all) and then to the fewest most likely tokens whose probability reaches {@code topP} ({@code 1}: all);
 *   <li>{@code seed}: the draws come from a random generator seeded with it, so the same seed gives the same tokens;
 *   <li>{@code eos}: the token id that ends a sequence (it is the sequence's last generated token), {@code -1}: none
 *       (every sequence gets {@code maxNewTokens} tokens);
 *   <li>{@code useCache}: {@code true} (the default) runs each step on the new token only, against the key/value cache;
 *       {@code false} recomputes the whole sequence every step (the baseline the cache is measured against; the same
 *       tokens up to float rounding).
 * </ul>
 *
 * <p>An invalid value is an {@link AttnException} BAD_INPUT when the options are made. Immutable and thread-safe.
 */
public record GenerationOptions(
        int maxNewTokens, double temperature, int topK, double topP, long seed, int eos, boolean useCache) {
    public GenerationOptions {
        if (maxNewTokens < 0) throw AttnException.badInput("maxNewTokens must be >= 0, got " + maxNewTokens);
        if (!(temperature >= 0) || Double.isInfinite(temperature))
            throw AttnException.badInput("temperature must be >= 0 and finite (0 = greedy), got " + temperature);
        if (topK < 0) throw AttnException.badInput("topK must be >= 0 (0 = all tokens), got " + topK);
        if (!(topP > 0 && topP <= 1)) throw AttnException.badInput("topP must be in (0, 1], got " + topP);
        if (eos < -1) throw AttnException.badInput("eos must be a token id, or -1 for none, got " + eos);
    }

    /** Greedy, 32 new tokens, no end token, with the cache. */
    public static GenerationOptions defaults() {
        return new GenerationOptions(32, 0, 0, 1, 0, -1, true);
    }

    public GenerationOptions withMaxNewTokens(int n) {
        return new GenerationOptions(n, temperature, topK, topP, seed, eos, useCache);
    }

    public GenerationOptions withTemperature(double t) {
        return new GenerationOptions(maxNewTokens, t, topK, topP, seed, eos, useCache);
    }

    public GenerationOptions withTopK(int k) {
        return new GenerationOptions(maxNewTokens, temperature, k, topP, seed, eos, useCache);
    }

    public GenerationOptions withTopP(double p) {
        return new GenerationOptions(maxNewTokens, temperature, topK, p, seed, eos, useCache);
    }

    public GenerationOptions withSeed(long s) {
        return new GenerationOptions(maxNewTokens, temperature, topK, topP, s, eos, useCache);
    }

    public GenerationOptions withEos(int id) {
        return new GenerationOptions(maxNewTokens, temperature, topK, topP, seed, id, useCache);
    }

    public GenerationOptions withCache(boolean cache) {
        return new GenerationOptions(maxNewTokens, temperature, topK, topP, seed, eos, cache);
    }

    /** Whether tokens are picked greedily ({@code temperature == 0}). */
    public boolean greedy() {
        return temperature == 0;
    }
}
