package io.attn.engine;

/**
 * What {@link LanguageModel#generate} produced: the new token ids of each sequence (ending with the {@link
 * GenerationOptions#eos() eos} id when the sequence produced it) and the time it took.
 *
 * <p>The arrays belong to the caller; do not change them if the record is shared between threads.
 *
 * @param tokens the generated ids per prompt, in the prompts' order
 * @param prefillNanos the time of the prompt pass, the first token's sampling included
 * @param totalNanos the time of the whole generation
 */
public record Generation(int[][] tokens, long prefillNanos, long totalNanos) {
    /** Tokens produced over all sequences. */
    public int generated() {
        int n = 0;
        for (int[] t : tokens) n += t.length;
        return n;
    }

    /** Generated tokens per second of the whole run (prefill included); 0 when nothing was generated. */
    public double tokensPerSecond() {
        int n = generated();
        return n == 0 ? 0 : n / (totalNanos / 1e9);
    }

    /**
     * Tokens per second after each sequence's first token (which the prefill produces): the rate of the decoding steps;
     * 0 when there were none.
     */
    public double decodeTokensPerSecond() {
        int n = generated() - tokens.length;
        return n <= 0 ? 0 : n / ((totalNanos - prefillNanos) / 1e9);
    }
}
