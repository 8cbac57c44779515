package io.attn.text;

import io.attn.AttnException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How token vectors become one sentence vector, as sentence-transformers' {@code Pooling} module does it, over the
 * tokens that take part: never padding, nor the prompt's tokens when the model's pooling excludes them ({@code
 * include_prompt: false}); the special tokens ({@code [CLS]}, {@code [SEP]}, {@code <s>}) do, as in
 * sentence-transformers.
 */
public enum Pooling {
    /** The mean of the tokens' vectors ({@code mean}). */
    MEAN("mean", "pooling_mode_mean_tokens"),
    /** The first token's vector, {@code [CLS]} ({@code cls}): the first that takes part. */
    CLS("cls", "pooling_mode_cls_token"),
    /** The element-wise maximum over the tokens ({@code max}). */
    MAX("max", "pooling_mode_max_tokens"),
    /** The tokens' sum divided by the square root of their number ({@code mean_sqrt_len_tokens}). */
    MEAN_SQRT_LEN("mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens"),
    /** The tokens' mean weighted by their position, 1 for the first ({@code weightedmean}: SGPT). */
    WEIGHTED_MEAN("weightedmean", "pooling_mode_weightedmean_tokens"),
    /** The last token's vector ({@code lasttoken}: decoder embedders). */
    LAST_TOKEN("lasttoken", "pooling_mode_lasttoken");
    private final String label, configKey;

    Pooling(String label, String configKey) {
        this.label = label;
        this.configKey = configKey;
    }

    /** A mode by its sentence-transformers name ({@code mean}, {@code cls}, ... any case). */
    public static Pooling parse(String s) {
        if (s == null) throw AttnException.badInput("pooling is null (expected one of " + labels() + ")");
        String l = s.trim().toLowerCase(Locale.ROOT);
        for (Pooling p : values()) if (p.label.equals(l)) return p;
        throw AttnException.badInput("pooling \"" + s + "\" is not one of " + String.join(", ", labels()));
    }

    /** Every mode's name. */
    public static List<String> labels() {
        return Arrays.stream(values()).map(Pooling::label).toList();
    }

    /** The name used on the command line and in sentence-transformers 6's {@code pooling_mode}. */
    public String label() {
        return label;
    }

    /** The mode's boolean in a classic Pooling {@code config.json}. */
    public String configKey() {
        return configKey;
    }
}
