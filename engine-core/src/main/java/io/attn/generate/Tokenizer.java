package io.attn.generate;

/**
 * Text to token ids and back. {@link WordTokenizer} is the tutorials' word-level one; a subword tokenizer (BPE,
 * WordPiece) implements the same interface: {@link #encode} for the prompt, {@link #token} per generated id (the
 * generator joins tokens with {@link #separator}).
 */
public interface Tokenizer {
    /** The ids of {@code text}, without special tokens. */
    int[] encode(String text);

    /** The text of one token. */
    String token(int id);

    /** What goes between two decoded tokens: a space for word-level tokens, nothing for subwords. */
    default String separator() {
        return " ";
    }

    int vocabSize();

    /** Special tokens' ids; -1 when absent. */
    int bos();

    int eos();

    int unk();
}
