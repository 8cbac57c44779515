package io.attn.text;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.attn.AttnException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** The small JSON files of a model folder (Gson), read with errors that name the file and the key. */
final class Json {
    /** config.json and its kind are small; anything larger is not one of them. */
    private static final long MAX_BYTES = 16L << 20;

    private Json() {}

    static JsonObject object(Path file) {
        JsonElement e = parse(file);
        if (!e.isJsonObject()) throw AttnException.badInput(file + ": must be a JSON object");
        return e.getAsJsonObject();
    }

    static JsonArray array(Path file) {
        JsonElement e = parse(file);
        if (!e.isJsonArray()) throw AttnException.badInput(file + ": must be a JSON array");
        return e.getAsJsonArray();
    }

    private static JsonElement parse(Path file) {
        try {
            if (Files.size(file) > MAX_BYTES)
                throw AttnException.badInput(file + ": " + Files.size(file) + " bytes is too large for this JSON file");
            try (JsonReader r = new JsonReader(reader(file))) {
                r.setStrictness(com.google.gson.Strictness.STRICT);
                JsonElement e = JsonParser.parseReader(r);
                if (r.peek() != JsonToken.END_DOCUMENT)
                    throw AttnException.badInput(file + ": malformed JSON (data after the value)");
                return e;
            }
        } catch (NoSuchFileException e) {
            throw AttnException.badInput(file + ": no such file");
        } catch (JsonParseException e) {
            throw AttnException.badInput(file + ": malformed JSON (" + rootMessage(e) + ")");
        } catch (IOException e) {
            throw AttnException.badInput(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /**
     * The top-level member {@code key} of a possibly large JSON object file (a tokenizer.json holds its whole vocabulary),
     * read by streaming past the other members; null when absent or JSON null.
     */
    static JsonElement topLevelMember(Path file, String key) {
        try (JsonReader r = new JsonReader(reader(file))) {
            r.setStrictness(com.google.gson.Strictness.STRICT);
            if (r.peek() != JsonToken.BEGIN_OBJECT) throw AttnException.badInput(file + ": must be a JSON object");
            r.beginObject();
            while (r.hasNext()) {
                if (r.nextName().equals(key)) return JsonParser.parseReader(r);
                r.skipValue();
            }
            return null;
        } catch (NoSuchFileException e) {
            throw AttnException.badInput(file + ": no such file");
        } catch (JsonParseException | IllegalStateException e) {
            throw AttnException.badInput(file + ": malformed JSON (" + rootMessage(e) + ")");
        } catch (IOException e) {
            throw AttnException.badInput(file + ": cannot read or malformed JSON (" + e.getMessage() + ")");
        }
    }

    static String string(JsonObject o, String key, String dflt, Path file) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) return dflt;
        if (e instanceof JsonPrimitive p && p.isString()) return p.getAsString();
        throw AttnException.badInput(file + ": \"" + key + "\" must be a string, got " + e);
    }

    static int integer(JsonObject o, String key, int dflt, Path file) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) return dflt;
        if (e instanceof JsonPrimitive p && p.isNumber()) {
            double d = p.getAsDouble();
            if (d == Math.rint(d) && Math.abs(d) < 1e9) return (int) d;
        }
        throw AttnException.badInput(file + ": \"" + key + "\" must be an integer below 10^9, got " + e);
    }

    static double number(JsonObject o, String key, double dflt, Path file) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) return dflt;
        if (e instanceof JsonPrimitive p && p.isNumber()) return p.getAsDouble();
        throw AttnException.badInput(file + ": \"" + key + "\" must be a number, got " + e);
    }

    static boolean bool(JsonObject o, String key, boolean dflt, Path file) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) return dflt;
        if (e instanceof JsonPrimitive p && p.isBoolean()) return p.getAsBoolean();
        throw AttnException.badInput(file + ": \"" + key + "\" must be true or false, got " + e);
    }

    private static Reader reader(Path file) throws IOException {
        return new java.io.InputStreamReader(
                Files.newInputStream(file),
                StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT));
    }

    private static String rootMessage(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) c = c.getCause();
        String m = c.getMessage();
        return m == null ? c.getClass().getSimpleName() : m;
    }
}
