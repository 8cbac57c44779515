package io.attn.cli;

import io.attn.AttnException;
import io.attn.text.Pooling;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Option values that the library would refuse, refused first as what they are, usage errors (exit 2, with the pointer
 * to {@code --help}), naming the option: the library's own checks name no option and would exit 3 (bad input).
 */
final class OptionValues {
    private OptionValues() {}

    /** {@code value} when it is at least {@code min}; {@code zero}, if not null, says what 0 means. */
    static int atLeast(CommandLine cmd, String option, int value, int min, String zero) {
        if (value < min)
            throw new ParameterException(
                    cmd,
                    option + " must be >= " + min + (zero == null ? "" : " (0 = " + zero + ")") + ", got " + value);
        return value;
    }

    /** The pooling {@code value} names. */
    static Pooling pooling(CommandLine cmd, String option, String value) {
        try {
            return Pooling.parse(value);
        } catch (AttnException e) {
            throw new ParameterException(
                    cmd, option + " " + value + ": expected one of " + String.join(", ", Pooling.labels()));
        }
    }

    /** A usage error: {@code message} names the option. */
    static ParameterException usage(CommandLine cmd, String message) {
        return new ParameterException(cmd, message);
    }
}
