package io.attn.server;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.MalformedJsonException;
import java.io.EOFException;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Strict JSON request bodies, read with Gson's streaming reader in strict mode: the body must be valid UTF-8 (encoded
 * surrogates included: Java's decoder refuses them), one JSON value and nothing after it, no NaN or Infinity, no
 * duplicate member names, no member this API does not know, and each member of its type. Every failure is a 400
 * {@link ApiError} naming the member.
 *
 * <p>Stateless; each call parses one body.
 */
final class JsonIn {
    private JsonIn() {}

    /** An object's members, read one at a time; refuses duplicates and unknown names. */
    static final class Obj {
        final JsonReader r;
        private final Set<String> seen = new HashSet<>();
        private final Set<String> known;

        Obj(JsonReader r, Set<String> known) {
            this.r = r;
            this.known = known;
        }

        /** The next member's name, or null at the end of the object. */
        String next() throws IOException {
            if (!r.hasNext()) {
                r.endObject();
                return null;
            }
            String name = r.nextName();
            if (!known.contains(name))
                throw ApiError.badRequest("unknown_parameter", "unrecognized request argument: " + name);
            if (!seen.add(name)) throw ApiError.badRequest("duplicate_parameter", "duplicate argument: " + name);
            return name;
        }
    }

    /** Opens the body as a JSON object whose members are {@code known}. */
    static Obj object(byte[] body, Set<String> known) {
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            throw ApiError.badRequest("invalid_utf8", "the request body is not valid UTF-8");
        }
        JsonReader r = new JsonReader(new StringReader(text));
        r.setStrictness(Strictness.STRICT);
        try {
            if (r.peek() != JsonToken.BEGIN_OBJECT)
                throw ApiError.badRequest("invalid_json", "the request body must be a JSON object");
            r.beginObject();
        } catch (IOException | IllegalStateException e) {
            throw malformed(e);
        }
        return new Obj(r, known);
    }

    /** After the object: nothing but whitespace may follow. */
    static void end(JsonReader r) {
        try {
            if (r.peek() != JsonToken.END_DOCUMENT)
                throw ApiError.badRequest("invalid_json", "data after the JSON object");
        } catch (IOException e) {
            throw malformed(e);
        }
    }

    static ApiError malformed(Exception e) {
        String m = e instanceof EOFException ? "the JSON ends early" : String.valueOf(e.getMessage());
        if (e instanceof MalformedJsonException || e instanceof IllegalStateException || e instanceof IOException)
            return ApiError.badRequest("invalid_json", "malformed JSON: " + firstLine(m));
        return ApiError.badRequest("invalid_json", "malformed JSON");
    }

    /** A string, or a non-empty array of strings. */
    static List<String> texts(JsonReader r, String name) throws IOException {
        JsonToken t = r.peek();
        if (t == JsonToken.STRING) return List.of(r.nextString());
        if (t != JsonToken.BEGIN_ARRAY)
            throw ApiError.badRequest("invalid_type", name + " must be a string or an array of strings");
        r.beginArray();
        List<String> out = new ArrayList<>();
        while (r.hasNext()) {
            JsonToken e = r.peek();
            if (e == JsonToken.NUMBER || e == JsonToken.BEGIN_ARRAY)
                throw ApiError.badRequest(
                        "invalid_type", name + ": token ids are not accepted, send the texts as strings");
            if (e != JsonToken.STRING)
                throw ApiError.badRequest("invalid_type", name + "[" + out.size() + "] must be a string");
            out.add(r.nextString());
        }
        r.endArray();
        if (out.isEmpty()) throw ApiError.badRequest("invalid_value", name + " must not be empty");
        return out;
    }

    static String string(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.STRING) throw ApiError.badRequest("invalid_type", name + " must be a string");
        return r.nextString();
    }

    /** A string or null. */
    static String optString(JsonReader r, String name) throws IOException {
        if (r.peek() == JsonToken.NULL) {
            r.nextNull();
            return null;
        }
        return string(r, name);
    }

    static boolean bool(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.BOOLEAN) throw ApiError.badRequest("invalid_type", name + " must be true or false");
        return r.nextBoolean();
    }

    static int integer(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.NUMBER) throw ApiError.badRequest("invalid_type", name + " must be an integer");
        String s = r.nextString();
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw ApiError.badRequest("invalid_type", name + " must be an integer, got " + firstLine(s));
        }
    }

    private static String firstLine(String s) {
        s = s.lines().findFirst().orElse("");
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
