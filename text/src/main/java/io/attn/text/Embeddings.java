package io.attn.text;

/**
 * The sentence embeddings of a list of texts, in input order, with what each cost: {@code tokens[i]} is the number of
 * the model's token ids for text {@code i} (special tokens included, after truncation), {@code truncated[i]} whether the
 * text was cut at the maximum length.
 *
 * <p>The arrays are the caller's; not copied.
 */
public record Embeddings(float[][] vectors, int[] tokens, boolean[] truncated) {
    /** Token ids in all, as an API's {@code usage.prompt_tokens} counts them. */
    public long totalTokens() {
        long n = 0;
        for (int t : tokens) n += t;
        return n;
    }

    /** Whether any text was cut. */
    public boolean anyTruncated() {
        for (boolean t : truncated) if (t) return true;
        return false;
    }
}
