package io.attn.io;

import io.attn.AttnException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The typed fields of one parsed JSON object (a config file, say), each read with a default and an error that names
 * the file and the key: {@code cfg.json: config key "d_model" must be an integer, got "512"}. A key that is absent or
 * JSON null takes the default. {@link #allow} and {@link #checkNoUnknown} refuse keys nobody reads (usually a typo).
 * The one reader of small JSON files' fields: the engine's module configs and the text models' Hugging Face files.
 *
 * <p>Not thread-safe (the allowed keys are collected as they are declared); one per object read.
 */
public final class JsonFields {
    /** The largest integer {@link #integer} takes (sizes and counts). */
    private static final int MAX_INTEGER = 999_999_999;

    private final Map<String, ?> map;
    private final String source;
    private final String prefix;
    private final Set<String> allowed = new LinkedHashSet<>();

    /** The fields of {@code map}; {@code source} (a file name) starts every error message. */
    public JsonFields(Map<String, ?> map, String source) {
        this(map, source, "");
    }

    private JsonFields(Map<String, ?> map, String source, String prefix) {
        this.map = map;
        this.source = source;
        this.prefix = prefix;
    }

    /** The fields of a parsed value, which must be an object ({@link Json#object}). */
    public static JsonFields of(Object parsed, String source) {
        return new JsonFields(Json.object(parsed, source), source);
    }

    /** The fields of a JSON object file ({@link Json#read}). */
    public static JsonFields read(Path file) {
        return of(Json.read(file), file.toString());
    }

    /** The file (or text) the fields came from, as errors name it. */
    public String source() {
        return source;
    }

    /** The object itself, read-only. */
    public Map<String, ?> map() {
        return Collections.unmodifiableMap(map);
    }

    /** The raw value under {@code key}: null when absent or JSON null. */
    public Object get(String key) {
        return map.get(key);
    }

    /** An integer of at most {@value #MAX_INTEGER} in magnitude ({@code 3.0} is 3). */
    public int integer(String key, int dflt) {
        Object v = map.get(key);
        if (v == null) return dflt;
        if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            if (Math.abs(n.doubleValue()) <= MAX_INTEGER) return n.intValue();
            throw bad(key, "is " + shown(v) + ", out of range (at most " + MAX_INTEGER + ")");
        }
        throw bad(key, "must be an integer, got " + shown(v));
    }

    public double number(String key, double dflt) {
        Object v = map.get(key);
        if (v == null) return dflt;
        if (v instanceof Number n) return n.doubleValue();
        throw bad(key, "must be a number, got " + shown(v));
    }

    public boolean bool(String key, boolean dflt) {
        Object v = map.get(key);
        if (v == null) return dflt;
        if (v instanceof Boolean b) return b;
        throw bad(key, "must be true or false, got " + shown(v));
    }

    public String string(String key, String dflt) {
        Object v = map.get(key);
        if (v == null) return dflt;
        if (v instanceof String s) return s;
        throw bad(key, "must be a string, got " + shown(v));
    }

    /** The object under {@code key} (its keys named {@code key.inner} in errors), or null when absent or JSON null. */
    @SuppressWarnings("unchecked")
    public JsonFields object(String key) {
        Object v = map.get(key);
        if (v == null) return null;
        if (v instanceof Map<?, ?> m) return new JsonFields((Map<String, ?>) m, source, prefix + key + ".");
        throw bad(key, "must be an object, got " + shown(v));
    }

    /** The array under {@code key}, or null when absent or JSON null. */
    @SuppressWarnings("unchecked")
    public List<Object> array(String key) {
        Object v = map.get(key);
        if (v == null) return null;
        if (v instanceof List<?> l) return (List<Object>) l;
        throw bad(key, "must be an array, got " + shown(v));
    }

    /** Declares keys as known to {@link #checkNoUnknown}. */
    public JsonFields allow(String... keys) {
        return allow(List.of(keys));
    }

    public JsonFields allow(Collection<String> keys) {
        allowed.addAll(keys);
        return this;
    }

    /** Refuses the first key not {@link #allow allowed}: {@code "<source>: unknown config key \"k\" for <what>"}. */
    public void checkNoUnknown(String what) {
        for (String k : map.keySet())
            if (!allowed.contains(k))
                throw AttnException.badInput(source + ": unknown config key \"" + prefix + k + "\" for " + what);
    }

    private AttnException bad(String key, String problem) {
        return AttnException.badInput(source + ": config key \"" + prefix + key + "\" " + problem);
    }

    /** A value as JSON text (strings quoted), cut short when long. */
    private static String shown(Object v) {
        String s;
        try {
            s = Json.write(v);
        } catch (AttnException e) {
            s = String.valueOf(v);
        }
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }
}
