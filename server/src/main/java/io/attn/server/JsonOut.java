package io.attn.server;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

/** JSON text for responses: strings escaped per RFC 8259, floats as the shortest decimal that reads back exactly. */
final class JsonOut {
    private JsonOut() {}

    static String string(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029 || Character.isSurrogate(c))
                        b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    /** A finite float as a JSON number (the shortest decimal that parses back to it); non-finite as null. */
    static String number(float f) {
        return Float.isFinite(f) ? Float.toString(f) : "null";
    }

    /** {@code [x0,x1,...]}: {@link Float#toString} is the shortest decimal that parses back to the same float. */
    static void floats(StringBuilder b, float[] v) {
        b.append('[');
        for (int k = 0; k < v.length; k++) {
            if (k > 0) b.append(',');
            b.append(v[k]);
        }
        b.append(']');
    }

    /** The vector as base64 of its little-endian float32 bytes (OpenAI's {@code encoding_format: base64}). */
    static String base64(float[] v) {
        ByteBuffer bb = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) bb.putFloat(x);
        return Base64.getEncoder().encodeToString(bb.array());
    }
}
