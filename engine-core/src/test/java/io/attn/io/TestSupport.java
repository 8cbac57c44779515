package io.attn.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.attn.AttnException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.function.Executable;

/** Helpers shared by the io tests. */
final class TestSupport {
    private TestSupport() {}

    static Path fixture(String name) {
        try {
            var url = TestSupport.class.getResource("/fixtures/" + name);
            if (url == null) throw new AssertionError("missing fixture " + name);
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new AssertionError(e);
        }
    }

    /** Asserts that {@code r} throws a one-line BAD_INPUT AttnException (and nothing else) and returns it. */
    static AttnException badInput(Executable r) {
        AttnException e = assertThrows(AttnException.class, r);
        assertEquals(AttnException.Code.BAD_INPUT, e.code(), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "message must be one line: " + e.getMessage());
        return e;
    }

    /** Like {@link #badInput} and also checks that the message contains every fragment. */
    static AttnException badInput(Executable r, String... fragments) {
        AttnException e = badInput(r);
        for (String f : fragments)
            if (!e.getMessage().contains(f)) fail("message \"" + e.getMessage() + "\" lacks \"" + f + "\"");
        return e;
    }

    /** An .npy file with a hand-written header dict (padded like numpy) followed by {@code data}. */
    static byte[] npy(String dict, byte[] data, int major) {
        int prefix = major == 1 ? 10 : 12;
        int total = (prefix + dict.length() + 1 + 63) / 64 * 64;
        int hlen = total - prefix;
        ByteBuffer b = ByteBuffer.allocate(total + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
        if (major == 1) b.putShort((short) hlen);
        else b.putInt(hlen);
        b.put(dict.getBytes(StandardCharsets.UTF_8));
        while (b.position() < total - 1) b.put((byte) ' ');
        b.put((byte) '\n');
        b.put(data);
        return b.array();
    }

    static byte[] npy(String dict, byte[] data) {
        return npy(dict, data, 1);
    }

    /** A safetensors file with the given header JSON (padded to 8 bytes) and data section. */
    static byte[] safetensors(String json, byte[] data) {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteBuffer b = ByteBuffer.allocate(8 + padded + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(padded).put(h);
        while (b.position() < 8 + padded) b.put((byte) ' ');
        b.put(data);
        return b.array();
    }

    static byte[] f32le(float... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) b.putFloat(x);
        return b.array();
    }
}
