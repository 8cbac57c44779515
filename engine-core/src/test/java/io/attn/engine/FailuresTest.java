package io.attn.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import org.junit.jupiter.api.Test;

/** {@link Failures}: what the API's calls throw for what went wrong inside them. */
class FailuresTest {
    @Test
    void eachKindOfFailureBecomesItsCode() {
        AttnException bad = AttnException.badInput("x is empty");
        assertSame(bad, Failures.of(bad, "running the model"), "an AttnException passes unchanged");

        AttnException oom = Failures.of(new OutOfMemoryError("Java heap space"), "running the model");
        assertEquals(AttnException.Code.DEVICE_OUT_OF_MEMORY, oom.code());
        assertTrue(oom.getMessage().contains("out of Java heap running the model (raise -Xmx)"), oom.getMessage());

        AttnException bug = Failures.of(new IllegalStateException("boom"), "generating");
        assertEquals(AttnException.Code.INTERNAL, bug.code());
        assertTrue(
                bug.getMessage().contains("internal error generating: java.lang.IllegalStateException: boom"),
                bug.getMessage());
        assertTrue(bug.getCause() instanceof IllegalStateException);
    }
}
