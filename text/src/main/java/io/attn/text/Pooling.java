package io.attn.text;

import io.attn.AttnException;
import java.util.Locale;

/**
 * How token vectors become one sentence vector, as sentence-transformers' {@code Pooling} module does it. Padding
 * never takes part; the first and last special tokens ({@code [CLS]}, {@code [SEP]}) do, as in sentence-transformers.
 */
public enum Pooling {
    /** The mean of the tokens' vectors ({@code pooling_mode_mean_tokens}). */
    MEAN,
    /** The first token's vector, {@code [CLS]} ({@code pooling_mode_cls_token}). */
    CLS,
    /** The element-wise maximum over the tokens ({@code pooling_mode_max_tokens}). */
    MAX;

    /** {@code mean}, {@code cls} or {@code max}, any case. */
    public static Pooling parse(String s) {
        if (s == null) throw AttnException.badInput("pooling is null (expected mean, cls or max)");
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw AttnException.badInput("pooling \"" + s + "\" is not one of mean, cls, max");
        }
    }

    /** The name used on the command line and in configs. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
