package io.attn.text;

import io.attn.tensor.Tensor;

/**
 * One text's token-level output: its token ids ({@code [CLS]} and {@code [SEP]} included) and the model's last hidden
 * state for them, {@code (L, E)} without padding, for users who pool themselves.
 */
public record TokenEmbeddings(int[] ids, Tensor hidden) {}
