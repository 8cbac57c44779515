package io.attn;

/**
 * The one unchecked exception the engine throws. Its {@link #code()} says what kind of failure it is, so callers can
 * tell a user's mistake (bad input, wrong shape) from a device or engine failure without parsing messages.
 *
 * <p>Messages are one line and meant for users: they name the file, tensor or argument and the problem. Immutable once
 * thrown; safe to hand between threads.
 */
public class AttnException extends RuntimeException {
    /**
     * What kind of failure this is, and the exit status a command (the {@code attn} CLI, the Spark job) ends with for
     * it: 3 bad input or shapes, 4 device unavailable, 5 out of memory, 6 non-finite values, 1 internal error (0 is
     * success, {@link #EXIT_USAGE} a usage error).
     */
    public enum Code {
        /** A file or argument is malformed or unsupported. */
        BAD_INPUT(3),
        /** Shapes do not fit together (input width, mask shape, weight shape). */
        SHAPE_MISMATCH(3),
        /** The requested device or backend cannot be used here. */
        DEVICE_UNAVAILABLE(4),
        /** The device ran out of memory. */
        DEVICE_OUT_OF_MEMORY(5),
        /** A NaN or Inf was found where finite values are required. */
        NON_FINITE(6),
        /** A bug or an unexpected failure inside the engine. */
        INTERNAL(1);

        private final int exitStatus;

        Code(int exitStatus) {
            this.exitStatus = exitStatus;
        }

        /** The exit status of a command that fails with this code (the same in {@code attn} and the Spark job). */
        public int exitStatus() {
            return exitStatus;
        }
    }

    /** The exit status of a command-line usage error (an unknown option, a bad value): no engine failure, no code. */
    public static final int EXIT_USAGE = 2;

    private final Code code;

    /** The request argument the failure is about, or null; set once, before the exception is thrown. */
    private String argument;

    public AttnException(Code code, String message) {
        super(oneLine(message));
        this.code = code;
    }

    public AttnException(Code code, String message, Throwable cause) {
        super(oneLine(message), cause);
        this.code = code;
    }

    /**
     * The argument of a model call this failure is about, when it is about one: {@code "input"}, {@code "memory"},
     * {@code "target"}, or a mask by PyTorch's name ({@code "attn_mask"}, {@code "key_padding_mask"}, {@code
     * "tgt_mask"}, ...: {@code Request.MaskArg.torchName()}). Null otherwise. So a caller that read each argument from
     * a file can name the file without parsing the message.
     */
    public String argument() {
        return argument;
    }

    /** Marks this failure as being about {@code argument} (see {@link #argument()}); returns this, to throw. */
    public AttnException about(String argument) {
        if (this.argument == null) this.argument = argument;
        return this;
    }

    /**
     * The message on one line, whatever it quotes: names taken from a file (a tensor name, a JSON key, a file name) may
     * hold line breaks or other control characters; they are shown as escapes (a backslash and n, r, t, or a 4-digit
     * code), so a message is always exactly one line and cannot forge terminal output.
     */
    public static String oneLine(String m) {
        if (m == null) return null;
        StringBuilder sb = null;
        for (int i = 0; i < m.length(); i++) {
            char c = m.charAt(i);
            boolean bad = c < 0x20 || c == 0x7f || c == 0x85 || c == 0x2028 || c == 0x2029;
            if (!bad) {
                if (sb != null) sb.append(c);
                continue;
            }
            if (sb == null) sb = new StringBuilder(m.length() + 8).append(m, 0, i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb == null ? m : sb.toString();
    }

    public Code code() {
        return code;
    }

    public static AttnException badInput(String message) {
        return new AttnException(Code.BAD_INPUT, message);
    }

    public static AttnException shape(String message) {
        return new AttnException(Code.SHAPE_MISMATCH, message);
    }
}
