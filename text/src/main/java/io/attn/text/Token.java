package io.attn.text;

/**
 * One token of a text as the model's tokenizer cuts it: its id, its string in the vocabulary, whether it is a special
 * token ({@code [CLS]}, {@code </s>}...), and the characters of the text it covers ({@code start} inclusive, {@code
 * stop} exclusive; both -1 for a special token, which covers none).
 */
public record Token(int id, String text, boolean special, int start, int stop) {}
