package io.attn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** Messages are one line whatever they quote (a Jazzer finding: a tensor name holding "\n" split the message). */
class AttnExceptionTest {
    @Test
    void controlCharactersAreEscaped() {
        String m = "f.safetensors: tensor 'a\nb\r\tc\u001b[31md\u2028' is bad";
        assertEquals(
                "f.safetensors: tensor 'a\\nb\\r\\tc\\u001b[31md\\u2028' is bad",
                AttnException.badInput(m).getMessage());
        assertEquals(
                "x\\ny", new AttnException(AttnException.Code.INTERNAL, "x\ny", new RuntimeException()).getMessage());
        String plain = "plain message, caf\u00e9";
        assertSame(plain, AttnException.oneLine(plain), "nothing to escape: the same string");
        assertEquals(null, AttnException.oneLine(null));
    }
}
