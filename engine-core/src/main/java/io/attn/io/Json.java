package io.attn.io;

import io.attn.AttnException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON (RFC 8259) parser and writer for headers and config files.
 *
 * <p>Parsing maps objects to {@link LinkedHashMap} (key order kept; duplicate keys are an error), arrays to
 * {@link List}, integral numbers to {@link Long} (integers beyond the long range become {@link Double}), other numbers
 * to {@link Double}, strings with all escapes including {@code \\u} surrogate pairs (an unpaired surrogate is an error),
 * and {@code true}/{@code false}/{@code null}. Not accepted: comments, trailing commas, single quotes, NaN/Infinity,
 * leading zeros, raw control characters in strings, nesting deeper than {@link #MAX_DEPTH}. Errors are
 * {@link AttnException} BAD_INPUT naming the source, line and column.
 */
public final class Json {
    /** Deepest nesting of arrays and objects accepted. */
    public static final int MAX_DEPTH = 256;

    private final String s;
    private final String source;
    private int i;

    private Json(String s, String source) {
        this.s = s;
        this.source = source;
    }

    /** Parses one JSON value (surrounding whitespace allowed); errors name the source as "JSON". */
    public static Object parse(String text) {
        return parse(text, "JSON");
    }

    /** Parses one JSON value; {@code source} (a file name) starts every error message. */
    public static Object parse(String text, String source) {
        Json p = new Json(text, source);
        p.ws();
        Object v = p.value(0);
        p.ws();
        if (p.i < p.s.length()) throw p.err("unexpected text after the JSON value");
        return v;
    }

    /** Longest file {@link #read(Path)} accepts. */
    public static final long MAX_FILE_BYTES = 100L << 20;

    /**
     * Reads and parses a UTF-8 JSON file (a config file, say); invalid UTF-8 and files over 100 MiB (or a 128th of the
     * JVM's maximum heap, when less) are refused.
     */
    public static Object read(Path path) {
        IoUtil.refuseSpecialFile(path);
        String name = path.toString();
        byte[] bytes;
        try {
            long size = Files.size(path);
            long cap = IoUtil.heapCap(MAX_FILE_BYTES);
            if (size > cap)
                throw IoUtil.bad(
                        name,
                        "JSON file is " + IoUtil.bytes(size) + ", over the " + IoUtil.bytes(cap) + " cap"
                                + (cap < MAX_FILE_BYTES ? " this JVM's heap allows (raise -Xmx)" : ""));
            bytes = Files.readAllBytes(path);
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw IoUtil.bad(name, "not valid UTF-8");
        }
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        return parse(text, name);
    }

    private AttnException err(String problem) {
        int line = 1, col = 1;
        for (int k = 0; k < Math.min(i, s.length()); k++) {
            if (s.charAt(k) == '\n') {
                line++;
                col = 1;
            } else col++;
        }
        return AttnException.badInput(
                source + ": invalid JSON at line " + line + ", column " + col + " (offset " + i + "): " + problem);
    }

    private void ws() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') i++;
            else break;
        }
    }

    private Object value(int depth) {
        if (i >= s.length()) throw err("unexpected end of input");
        char c = s.charAt(i);
        switch (c) {
            case '{':
                return object(depth + 1);
            case '[':
                return array(depth + 1);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number();
                throw err("unexpected character " + describe(c));
        }
    }

    private static String describe(char c) {
        return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
    }

    private Object literal(String word, Object v) {
        if (!s.startsWith(word, i)) throw err("unexpected character " + describe(s.charAt(i)));
        i += word.length();
        return v;
    }

    private Map<String, Object> object(int depth) {
        if (depth > MAX_DEPTH) throw err("nesting deeper than " + MAX_DEPTH + " levels");
        i++; // {
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return m;
        }
        while (true) {
            ws();
            if (i >= s.length() || s.charAt(i) != '"')
                throw err(i >= s.length() ? "unexpected end of input" : "expected a string key");
            int keyAt = i;
            String k = string();
            ws();
            expect(':');
            ws();
            Object v = value(depth);
            if (m.containsKey(k)) {
                i = keyAt;
                throw err("duplicate key \"" + k + "\"");
            }
            m.put(k, v);
            ws();
            if (i >= s.length()) throw err("unexpected end of input (missing '}')");
            char c = s.charAt(i++);
            if (c == '}') return m;
            if (c != ',') {
                i--;
                throw err("expected ',' or '}'");
            }
        }
    }

    private List<Object> array(int depth) {
        if (depth > MAX_DEPTH) throw err("nesting deeper than " + MAX_DEPTH + " levels");
        i++; // [
        List<Object> a = new ArrayList<>();
        ws();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return a;
        }
        while (true) {
            ws();
            a.add(value(depth));
            ws();
            if (i >= s.length()) throw err("unexpected end of input (missing ']')");
            char c = s.charAt(i++);
            if (c == ']') return a;
            if (c != ',') {
                i--;
                throw err("expected ',' or ']'");
            }
        }
    }

    private void expect(char c) {
        if (i >= s.length()) throw err("unexpected end of input (expected '" + c + "')");
        if (s.charAt(i) != c) throw err("expected '" + c + "'");
        i++;
    }

    private String string() {
        i++; // opening quote
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (i >= s.length()) throw err("unterminated string");
            char c = s.charAt(i);
            if (c == '"') {
                i++;
                return sb.toString();
            }
            if (c < 0x20) throw err("raw control character " + describe(c) + " in a string (must be escaped)");
            if (c != '\\') {
                sb.append(c);
                i++;
                continue;
            }
            if (i + 1 >= s.length()) throw err("unterminated string");
            char e = s.charAt(i + 1);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    char u = hex4(i + 2);
                    if (Character.isHighSurrogate(u)) {
                        if (!(s.startsWith("\\u", i + 6))) throw err("unpaired surrogate \\u" + hex(u));
                        char lo = hex4(i + 8);
                        if (!Character.isLowSurrogate(lo)) throw err("unpaired surrogate \\u" + hex(u));
                        sb.append(u).append(lo);
                        i += 6;
                    } else if (Character.isLowSurrogate(u)) {
                        throw err("unpaired surrogate \\u" + hex(u));
                    } else sb.append(u);
                    i += 4;
                }
                default -> throw err("invalid escape \\" + describe(e));
            }
            i += 2;
        }
    }

    private static String hex(char c) {
        return String.format("%04x", (int) c);
    }

    private char hex4(int at) {
        if (at + 4 > s.length()) {
            i = Math.min(at, s.length());
            throw err("truncated \\u escape");
        }
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int d = Character.digit(s.charAt(at + k), 16);
            if (d < 0 || s.charAt(at + k) > 'f') {
                i = at + k;
                throw err("invalid hex digit in \\u escape");
            }
            v = v * 16 + d;
        }
        return (char) v;
    }

    private Object number() {
        int start = i;
        if (s.charAt(i) == '-') i++;
        if (i >= s.length() || !digit(s.charAt(i))) throw err("expected a digit");
        if (s.charAt(i) == '0') {
            i++;
            if (i < s.length() && digit(s.charAt(i))) throw err("leading zeros are not allowed");
        } else while (i < s.length() && digit(s.charAt(i))) i++;
        boolean integral = true;
        if (i < s.length() && s.charAt(i) == '.') {
            integral = false;
            i++;
            if (i >= s.length() || !digit(s.charAt(i))) throw err("expected a digit after '.'");
            while (i < s.length() && digit(s.charAt(i))) i++;
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            integral = false;
            i++;
            if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
            if (i >= s.length() || !digit(s.charAt(i))) throw err("expected a digit in the exponent");
            while (i < s.length() && digit(s.charAt(i))) i++;
        }
        String t = s.substring(start, i);
        if (integral) {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                // beyond the long range: fall through to double
            }
        }
        double d = Double.parseDouble(t);
        if (Double.isInfinite(d)) {
            i = start;
            throw err("number " + t + " is out of range");
        }
        return d;
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }

    // ---------------------------------------------------------------- writer

    /**
     * Compact JSON text for {@code value}: a Map with String keys, a List (or other Iterable), a String, a Number
     * (finite), a Boolean or null. Anything else is a BAD_INPUT error.
     */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v, int depth) {
        if (depth > MAX_DEPTH) throw AttnException.badInput("JSON: value nested deeper than " + MAX_DEPTH + " levels");
        if (v == null) sb.append("null");
        else if (v instanceof String str) quote(sb, str);
        else if (v instanceof Boolean b) sb.append(b);
        else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (!Double.isFinite(d)) throw AttnException.badInput("JSON: cannot write non-finite number " + d);
            if (d == Math.rint(d) && Math.abs(d) < 1e15) sb.append((long) d).append(".0");
            else sb.append(d);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte)
            sb.append(((Number) v).longValue());
        else if (v instanceof Number n) sb.append(n); // BigInteger, BigDecimal
        else if (v instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!(e.getKey() instanceof String k))
                    throw AttnException.badInput("JSON: object keys must be strings, got " + e.getKey());
                if (!first) sb.append(',');
                first = false;
                quote(sb, k);
                sb.append(':');
                write(sb, e.getValue(), depth + 1);
            }
            sb.append('}');
        } else if (v instanceof Iterable<?> it) {
            sb.append('[');
            boolean first = true;
            for (Object o : it) {
                if (!first) sb.append(',');
                first = false;
                write(sb, o, depth + 1);
            }
            sb.append(']');
        } else
            throw AttnException.badInput("JSON: cannot write a " + v.getClass().getSimpleName());
    }

    private static void quote(StringBuilder sb, String str) {
        sb.append('"');
        for (int k = 0; k < str.length(); k++) {
            char c = str.charAt(k);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
                }
            }
        }
        sb.append('"');
    }
}
