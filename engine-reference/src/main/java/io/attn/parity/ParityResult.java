package io.attn.parity;

/**
 * The outcome of one {@link ParityCase} on one backend: the output shape, the largest absolute error, the relative
 * error {@code ||got - ref||_2 / ||ref||_2} over finite positions, whether it passed, and a one-line message (why it
 * failed, or "ok").
 */
public record ParityResult(
        ParityCase parityCase,
        String shape,
        String backend,
        double maxAbsErr,
        double relErr,
        boolean pass,
        String message) {
    /** Whether the backend declared the node unsupported (a skip, not a pass; a failure on a complete backend). */
    public boolean unsupported() {
        return !pass && ParityHarness.UNSUPPORTED.equals(message);
    }
}
