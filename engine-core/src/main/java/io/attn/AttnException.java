package io.attn;

/**
 * The one unchecked exception the engine throws. Its {@link #code()} says what kind of failure it is, so callers can
 * tell a user's mistake (bad input, wrong shape) from a device or engine failure without parsing messages.
 *
 * <p>Messages are one line and meant for users: they name the file, tensor or argument and the problem. Immutable once
 * thrown; safe to hand between threads.
 */
public class AttnException extends RuntimeException {
    /** What kind of failure this is. */
    public enum Code {
        /** A file or argument is malformed or unsupported. */
        BAD_INPUT,
        /** Shapes do not fit together (input width, mask shape, weight shape). */
        SHAPE_MISMATCH,
        /** The requested device or backend cannot be used here. */
        DEVICE_UNAVAILABLE,
        /** The device ran out of memory. */
        DEVICE_OUT_OF_MEMORY,
        /** A NaN or Inf was found where finite values are required. */
        NON_FINITE,
        /** A bug or an unexpected failure inside the engine. */
        INTERNAL
    }

    private final Code code;

    public AttnException(Code code, String message) {
        super(message);
        this.code = code;
    }

    public AttnException(Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
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
