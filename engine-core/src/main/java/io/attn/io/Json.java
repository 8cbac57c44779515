package io.attn.io;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.MalformedJsonException;
import io.attn.AttnException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Strict JSON (RFC 8259) for headers, config files and JSON lines, read with Gson's streaming {@link JsonReader} in
 * strict mode (Gson is the project's one JSON library; docs/design.md says why), and a small writer.
 *
 * <p>Parsing maps objects to {@link LinkedHashMap} (key order kept; duplicate keys are an error), arrays to
 * {@link List}, integral numbers to {@link Long} (integers beyond the long range become {@link Double}), other numbers
 * to {@link Double}, strings with all escapes including {@code \\u} surrogate pairs, and {@code true}/{@code
 * false}/{@code null}. Not accepted: comments, trailing commas, single quotes, unquoted words, NaN/Infinity, leading
 * zeros, numbers out of the double range, raw control characters in strings, unpaired surrogates (escaped or not), a
 * byte-order mark ({@link #read(Path)} skips one), nesting deeper than {@link #MAX_DEPTH}, anything after the value,
 * and number literals of 1024 characters or more (Gson's limit). Errors are {@link AttnException} BAD_INPUT naming
 * the source, line and column (Gson's position: at the problem or just after it).
 *
 * <p>{@link JsonFields} reads typed fields of a parsed object; {@link #textField} is the one reader of JSON Lines
 * records.
 */
public final class Json {
    /** Deepest nesting of arrays and objects accepted. */
    public static final int MAX_DEPTH = 256;

    /** Longest file {@link #read(Path)} accepts. */
    public static final long MAX_FILE_BYTES = 100L << 20;

    private Json() {}

    /** Parses one JSON value (surrounding whitespace allowed); errors name the source as "JSON". */
    public static Object parse(String text) {
        return parse(text, "JSON");
    }

    /** Parses one JSON value; {@code source} (a file name) starts every error message. */
    public static Object parse(String text, String source) {
        try {
            return parseText(text);
        } catch (Bad b) {
            throw b.at(source);
        }
    }

    /**
     * Reads and parses a UTF-8 JSON file (a config file, say); invalid UTF-8 and files over 100 MiB (or a 128th of the
     * JVM's maximum heap, when less) are refused. A byte-order mark at the start is skipped.
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
            text = utf8().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw IoUtil.bad(name, "not valid UTF-8");
        }
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        return parse(text, name);
    }

    /** {@code parsed} as a JSON object; anything else is BAD_INPUT {@code "<source>: must be a JSON object"}. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object parsed, String source) {
        if (parsed instanceof Map<?, ?> m) return (Map<String, Object>) m;
        throw AttnException.badInput(source + ": must be a JSON object");
    }

    /** {@code parsed} as a JSON array; anything else is BAD_INPUT {@code "<source>: must be a JSON array"}. */
    @SuppressWarnings("unchecked")
    public static List<Object> array(Object parsed, String source) {
        if (parsed instanceof List<?> l) return (List<Object>) l;
        throw AttnException.badInput(source + ": must be a JSON array");
    }

    /** {@link #parse(String, String)}, which must give an object ({@link #object}). */
    public static Map<String, Object> parseObject(String text, String source) {
        return object(parse(text, source), source);
    }

    /** {@link #read(Path)}, which must give an object ({@link #object}). */
    public static Map<String, Object> readObject(Path path) {
        return object(read(path), path.toString());
    }

    /**
     * The top-level member {@code key} of a JSON object file of any size (a tokenizer.json holds its whole vocabulary),
     * read by streaming past the other members without keeping them; null when absent or JSON null. The file must be
     * strict UTF-8 JSON (a byte-order mark at the start is skipped); what is read after the member is not checked.
     */
    public static Object topLevelMember(Path file, String key) {
        IoUtil.refuseSpecialFile(file);
        String name = file.toString();
        try (JsonReader r = reader(new InputStreamReader(Files.newInputStream(file), utf8()))) {
            if (r.peek() != JsonToken.BEGIN_OBJECT) throw IoUtil.bad(name, "must be a JSON object");
            r.beginObject();
            while (r.hasNext()) {
                String k = checked(r.nextName(), r, null);
                if (k.equals(key)) return value(r, 1, null, true);
                value(r, 1, null, false);
            }
            return null;
        } catch (Bad b) {
            throw b.at(name);
        } catch (CharacterCodingException e) {
            throw IoUtil.bad(name, "not valid UTF-8");
        } catch (MalformedJsonException | EOFException e) {
            throw Bad.of(e, null).at(name);
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
    }

    /**
     * The text of one JSON Lines record: {@code line} must be one strict JSON object (a byte-order mark before it is
     * skipped, as at the start of a file), and its {@code field} a string; null when the field is absent or JSON
     * null. {@code where} (a file and line) starts every error: {@code "<where> is not a JSON object (...)"}, {@code
     * "<where>: field \"text\" is not a string"}. Every reader of JSON lines calls this, so a line gets one verdict.
     */
    public static String textField(String line, String field, String where) {
        Object v;
        try {
            v = parseText(line.startsWith("\uFEFF") ? line.substring(1) : line);
        } catch (Bad b) {
            throw AttnException.badInput(
                    where + " is not a JSON object (invalid JSON at column " + b.column + ": " + b.problem + ")");
        }
        if (!(v instanceof Map<?, ?> m)) throw AttnException.badInput(where + " is not a JSON object");
        Object t = m.get(field);
        if (t == null || t instanceof String) return (String) t;
        throw AttnException.badInput(where + ": field \"" + field + "\" is not a string");
    }

    // ---------------------------------------------------------------- parser

    private static CharsetDecoder utf8() {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }

    private static JsonReader reader(Reader in) {
        JsonReader r = new JsonReader(in);
        r.setStrictness(Strictness.STRICT);
        return r;
    }

    /** One JSON value and nothing after it; failures are {@link Bad}. */
    private static Object parseText(String text) {
        // Gson skips a byte-order mark; in text (not a file) it is a character that JSON does not allow
        if (text.startsWith("\uFEFF")) throw new Bad("unexpected character U+FEFF (a byte-order mark)", 1, 1, 0);
        JsonReader r = reader(new StringReader(text));
        Object v;
        try {
            v = value(r, 0, text, true);
        } catch (IOException e) {
            throw Bad.of(e, text);
        }
        try {
            if (r.peek() == JsonToken.END_DOCUMENT) return v;
            throw Bad.here(r, "unexpected text after the JSON value", text);
        } catch (IOException e) { // strict mode refuses a second value
            throw new Bad("unexpected text after the JSON value", Bad.of(e, text));
        }
    }

    /**
     * The next value at nesting {@code depth}: built when {@code keep}, else only checked for syntax and depth (and
     * null returned). {@code text}, when known, lets error messages quote the input.
     */
    private static Object value(JsonReader r, int depth, String text, boolean keep) throws IOException {
        JsonToken t = r.peek();
        switch (t) {
            case BEGIN_OBJECT -> {
                if (depth >= MAX_DEPTH) throw Bad.here(r, "nesting deeper than " + MAX_DEPTH + " levels", text);
                r.beginObject();
                Map<String, Object> m = keep ? new LinkedHashMap<>() : null;
                while (r.hasNext()) {
                    if (!keep) {
                        r.nextName();
                        value(r, depth + 1, text, false);
                        continue;
                    }
                    String k = checked(r.nextName(), r, text);
                    if (m.containsKey(k)) throw Bad.here(r, "duplicate key \"" + k + "\"", text);
                    m.put(k, value(r, depth + 1, text, true));
                }
                r.endObject();
                return m;
            }
            case BEGIN_ARRAY -> {
                if (depth >= MAX_DEPTH) throw Bad.here(r, "nesting deeper than " + MAX_DEPTH + " levels", text);
                r.beginArray();
                List<Object> a = keep ? new ArrayList<>() : null;
                while (r.hasNext()) {
                    Object v = value(r, depth + 1, text, keep);
                    if (keep) a.add(v);
                }
                r.endArray();
                return a;
            }
            case STRING -> {
                if (!keep) {
                    r.skipValue();
                    return null;
                }
                return checked(r.nextString(), r, text);
            }
            case NUMBER -> {
                String n = r.nextString();
                return keep ? number(n, r, text) : null;
            }
            case BOOLEAN -> {
                return r.nextBoolean();
            }
            case NULL -> {
                r.nextNull();
                return null;
            }
            default -> throw Bad.here(r, "unexpected " + t, text); // NAME, END_*: not where a value starts
        }
    }

    /** {@code s}, which must hold no unpaired surrogate (Gson decodes {@code \\uD800} alone without complaint). */
    private static String checked(String s, JsonReader r, String text) {
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (Character.isHighSurrogate(c) && k + 1 < s.length() && Character.isLowSurrogate(s.charAt(k + 1))) k++;
            else if (Character.isSurrogate(c))
                throw Bad.here(r, "unpaired surrogate \\u" + String.format("%04x", (int) c), text);
        }
        return s;
    }

    /** A number literal as Gson found it (strict JSON syntax): Long when integral and in range, else Double. */
    private static Object number(String n, JsonReader r, String text) {
        if (n.indexOf('.') < 0 && n.indexOf('e') < 0 && n.indexOf('E') < 0) {
            try {
                return Long.parseLong(n);
            } catch (NumberFormatException e) {
                // beyond the long range: a double
            }
        }
        double d = Double.parseDouble(n);
        if (Double.isInfinite(d))
            throw Bad.here(
                    r, "number " + (n.length() > 40 ? n.substring(0, 40) + "..." : n) + " is out of range", text);
        return d;
    }

    /** A parse failure not yet given its source: the problem, and where (1-based line and column; offset or -1). */
    private static final class Bad extends RuntimeException {
        private static final Pattern AT = Pattern.compile("^(.*?) at line (\\d+) column (\\d+) path .*$");

        final String problem;
        final int line, column;
        final long offset;

        Bad(String problem, int line, int column, long offset) {
            super(problem, null, false, false);
            this.problem = problem;
            this.line = line;
            this.column = column;
            this.offset = offset;
        }

        Bad(String problem, Bad at) {
            this(problem, at.line, at.column, at.offset);
        }

        AttnException at(String source) {
            return AttnException.badInput(source + ": invalid JSON at line " + line + ", column " + column
                    + (offset >= 0 ? " (offset " + offset + ")" : "") + ": " + problem);
        }

        /** {@code problem} at the reader's position ({@link JsonReader#toString} names it). */
        static Bad here(JsonReader r, String problem, String text) {
            Bad where = of(r.toString(), text);
            return new Bad(problem, where);
        }

        /** Gson's failure, its message made readable (Gson's own names its lenient mode and a web page). */
        static Bad of(IOException e, String text) {
            Bad b = of(e.getMessage() == null ? "" : e.getMessage(), text);
            if (e instanceof EOFException) return new Bad("unexpected end of input", b);
            return new Bad(readable(b.problem, b, text), b);
        }

        /** A Gson message or location ("... at line 1 column 5 path $.a") as problem and position. */
        private static Bad of(String message, String text) {
            String first = message.lines().findFirst().orElse("");
            Matcher m = AT.matcher(first);
            if (!m.matches()) return new Bad(first.isEmpty() ? "malformed JSON" : first, 0, 0, -1);
            int line = Integer.parseInt(m.group(2)), column = Integer.parseInt(m.group(3));
            return new Bad(m.group(1), line, column, offset(text, line, column));
        }

        /** The character offset of (line, column) in {@code text}; -1 when there is no text. */
        private static long offset(String text, int line, int column) {
            if (text == null) return -1;
            int at = 0;
            for (int l = 1; l < line && at >= 0; l++) {
                at = text.indexOf('\n', at);
                if (at >= 0) at++;
            }
            return at < 0 ? -1 : Math.min((long) at + column - 1, text.length());
        }

        private static String readable(String gson, Bad at, String text) {
            if (gson.isEmpty()) return "malformed JSON";
            if (gson.startsWith("Use JsonReader.setStrictness")) return unexpected(at, text); // Gson's catch-all
            if (gson.equals("Expected ':'")) return "expected ':'";
            if (gson.equals("Expected name")) return "expected a string key";
            if (gson.equals("Unterminated object")) return "expected ',' or '}'";
            if (gson.equals("Unterminated array")) return "expected ',' or ']'";
            if (gson.equals("Unterminated string")) return "unterminated string";
            if (gson.equals("Unterminated escape sequence")) return "unterminated escape sequence";
            if (gson.startsWith("Malformed Unicode escape")) return "invalid \\u escape (4 hex digits expected)";
            if (gson.startsWith("Invalid escape") || gson.startsWith("Invalid escaped character"))
                return "invalid escape sequence";
            if (gson.startsWith("Unescaped control characters"))
                return "raw control character in a string (must be escaped)";
            return Character.toLowerCase(gson.charAt(0)) + gson.substring(1).replace(" in strict mode", "");
        }

        /**
         * What Gson's catch-all refused, read off the text: Gson stops either at the start of a token it cannot take
         * (a bad number or word) or just after a character out of place, so the character before the position is
         * the culprit (with the word it ends, if any) unless it is whitespace or punctuation that may precede a value.
         */
        private static String unexpected(Bad at, String text) {
            if (text == null || at.offset < 0) return "malformed JSON (not strict RFC 8259)";
            int p = (int) at.offset;
            String what;
            if (p > 0 && " \t\r\n[{,:".indexOf(text.charAt(p - 1)) < 0) {
                int s = p - 1;
                while (s > 0 && isWordChar(text.charAt(s)) && isWordChar(text.charAt(s - 1))) s--;
                what = isWordChar(text.charAt(p - 1)) ? word(text, s) : describe(text.charAt(p - 1));
            } else if (p >= text.length()) return "unexpected end of input";
            else {
                String word = text.substring(p, wordEnd(text, p));
                if (NUMBER.matcher(word).matches()) { // a good number: what follows it is out of place
                    if (word.length() >= 1024) return "number literal of 1024 characters or more";
                    int e = p + word.length();
                    if (e >= text.length()) return "unexpected end of input";
                    what = describe(text.charAt(e));
                } else what = word.isEmpty() ? describe(text.charAt(p)) : word(text, p);
            }
            return "unexpected " + what + hint(what, text, p);
        }

        /** The word starting at {@code s}, quoted, cut short when long. */
        private static String word(String text, int s) {
            String w = text.substring(s, wordEnd(text, s));
            return "'" + (w.length() > 24 ? w.substring(0, 24) + "..." : w) + "'";
        }

        private static int wordEnd(String text, int s) {
            int e = s;
            while (e < text.length() && isWordChar(text.charAt(e))) e++;
            return e;
        }

        private static final Pattern NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");

        private static String hint(String what, String text, int p) {
            if (what.equals("'/'") || what.equals("'#'")) return " (JSON has no comments)";
            if (what.equals("'''")) return " (strings and keys take double quotes)";
            if (what.matches("'-?0[0-9].*")) return " (leading zeros are not allowed)";
            if (what.matches("'-?(NaN|Infinity).*")) return " (NaN and Infinity are not JSON)";
            if (what.matches("'[-+0-9.].*")) return " (not a JSON number)";
            if (what.equals("']'") || what.equals("'}'")) {
                int k = p - 2;
                while (k >= 0 && " \t\r\n".indexOf(text.charAt(k)) >= 0) k--;
                if (k >= 0 && text.charAt(k) == ',') return " (a trailing comma)";
            }
            return "";
        }

        private static boolean isWordChar(char c) {
            return Character.isLetterOrDigit(c) || c == '-' || c == '+' || c == '.' || c == '_';
        }

        private static String describe(char c) {
            return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
        }
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
