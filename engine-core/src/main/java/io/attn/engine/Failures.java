package io.attn.engine;

import io.attn.AttnException;

/** How the API's calls report what went wrong inside the engine: one {@link AttnException}, whatever was thrown. */
final class Failures {
    private Failures() {}

    /**
     * {@code e} as the caller sees it: an {@link AttnException} as it is; running out of Java heap as {@code
     * DEVICE_OUT_OF_MEMORY}; any other exception as {@code INTERNAL} (a bug). {@code doing} says what the call was
     * doing ("running the model").
     */
    static AttnException of(Throwable e, String doing) {
        if (e instanceof AttnException a) return a;
        if (e instanceof OutOfMemoryError)
            return new AttnException(
                    AttnException.Code.DEVICE_OUT_OF_MEMORY, "out of Java heap " + doing + " (raise -Xmx)", e);
        return new AttnException(AttnException.Code.INTERNAL, "internal error " + doing + ": " + e, e);
    }
}
