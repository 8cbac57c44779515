package io.attn.text;

import io.attn.AttnException;
import java.util.ArrayList;
import java.util.List;

/**
 * Texts tokenized by an {@link Embedder} ({@link Embedder#tokenize}), ready to embed, alone or joined with others
 * ({@link #concat}): a server tokenizes each request on its own thread, checks its limits on the token counts, and
 * embeds many requests' texts in one call. Immutable and thread-safe.
 */
public final class TokenizedTexts {
    final TextTokenizer.Tokens[] tokens;
    final Object owner; // the tokenizer that made them: ids of one vocabulary are not another's

    TokenizedTexts(TextTokenizer.Tokens[] tokens, Object owner) {
        this.tokens = tokens;
        this.owner = owner;
    }

    /** The number of texts. */
    public int size() {
        return tokens.length;
    }

    /** Text {@code i}'s number of token ids, special tokens included, after truncation. */
    public int tokens(int i) {
        return tokens[i].ids().length;
    }

    /** Whether text {@code i} was cut at the maximum length. */
    public boolean truncated(int i) {
        return tokens[i].truncated();
    }

    /** Token ids in all. */
    public long totalTokens() {
        long n = 0;
        for (TextTokenizer.Tokens t : tokens) n += t.ids().length;
        return n;
    }

    /** The texts of all {@code parts} (tokenized by one embedder), in order. */
    public static TokenizedTexts concat(List<TokenizedTexts> parts) {
        if (parts.isEmpty()) throw AttnException.badInput("nothing to join");
        List<TextTokenizer.Tokens> all = new ArrayList<>();
        for (TokenizedTexts p : parts) {
            if (p.owner != parts.get(0).owner)
                throw AttnException.badInput("texts tokenized by different embedders cannot be joined");
            all.addAll(List.of(p.tokens));
        }
        return new TokenizedTexts(all.toArray(TextTokenizer.Tokens[]::new), parts.get(0).owner);
    }
}
