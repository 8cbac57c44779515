package io.attn.cli;

import io.attn.AttnException;
import io.attn.text.Pooling;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Option values that the library would refuse, refused first as what they are, usage errors (exit 2, with the pointer
 * to {@code --help}), naming the option: the library's own checks name no option and would exit 3 (bad input). And the
 * {@code --output} of embed, rerank and classify, checked before any work ({@link #outputTarget}).
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

    /** {@code --task-adapters merge|share}, or null when not given; another value is a usage error. */
    static io.attn.engine.TaskAdapters.Mode taskAdapters(CommandLine cmd, String value) {
        if (value == null) return null;
        if (!value.equals("merge") && !value.equals("share"))
            throw new ParameterException(cmd, "--task-adapters " + value + ": use merge or share");
        return io.attn.engine.TaskAdapters.Mode.parse(value);
    }

    /** A usage error: {@code message} names the option. */
    static ParameterException usage(CommandLine cmd, String message) {
        return new ParameterException(cmd, message);
    }

    /**
     * Refuses, before any work, an output that could not be written or would replace the input: its folder missing or
     * not a folder (bad input, exit 3), or the input file itself (a usage error, exit 2: the input would be lost).
     */
    static void outputTarget(CommandLine cmd, String option, Path out, Path input) {
        if (out == null) return;
        Path dir = out.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) throw AttnException.badInput(out + ": no such directory");
        if (Files.isDirectory(out)) throw AttnException.badInput(out + ": is a directory");
        try {
            if (input != null && Files.exists(out) && Files.exists(input) && Files.isSameFile(out, input))
                throw new ParameterException(cmd, option + " " + out + " is the --input file: it would be replaced");
        } catch (IOException e) {
            throw AttnException.badInput(out + ": cannot read (" + e.getMessage() + ")");
        }
    }
}
