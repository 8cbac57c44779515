package io.attn.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * attention_variants.json (the dispatch's and tools/gpu_sweep.py's table) against the committed PTX: every variant's
 * entry exists in its file with the 19 parameters the JSON's "about" lists (q, k, v, o: u64; B, H, HKV, L, S: u32;
 * scale: f32; causal: u32; mask: u64; maskKind, maskStrideB, maskStrideH: u32; kpm: u64; kpmKind, winL, winR: u32),
 * every converter
 * entry with (const float* x, uint16* y, long long n) = u64 u64 u64, and a 16-bit-input variant has a converter. The
 * same check as {@code gpu_sweep.py --dry-run} (gpu-run.sh's dry run in CI), in Java, without a JSON library: the
 * table's objects are flat.
 */
class AttentionVariantsTest {
    static final List<String> VARIANT = List.of(
            "u64", "u64", "u64", "u64", "u32", "u32", "u32", "u32", "u32", "f32", "u32", "u64", "u32", "u32", "u32",
            "u64", "u32", "u32", "u32");
    static final List<String> CONVERTER = List.of("u64", "u64", "u64");
    private static final Pattern OBJECT = Pattern.compile("\\{[^{}]*\\}");

    static String resource(String name) throws IOException {
        try (InputStream in = Kernels.class.getResourceAsStream(name)) {
            assertNotNull(in, "resource io/attn/kernels/" + name + " is missing");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static String field(String obj, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*(\"([^\"]*)\"|[-0-9.]+)")
                .matcher(obj);
        return m.find() ? (m.group(2) != null ? m.group(2) : m.group(1)) : null;
    }

    /** The flat objects of the JSON array {@code key}. */
    static List<String> objects(String json, String key) {
        int i = json.indexOf("\"" + key + "\"");
        assertTrue(i >= 0, "no \"" + key + "\" in attention_variants.json");
        int start = json.indexOf('[', i), end = json.indexOf(']', start);
        List<String> out = new ArrayList<>();
        Matcher m = OBJECT.matcher(json.substring(start, end));
        while (m.find()) out.add(m.group());
        return out;
    }

    /** The parameter types of {@code entry} in PTX file {@code file}, or null when it has no such entry. */
    static List<String> params(String file, String entry) throws IOException {
        String text = resource(file.endsWith(".ptx") ? file : file + ".ptx");
        Matcher m = Pattern.compile("\\.entry\\s+" + Pattern.quote(entry) + "\\s*\\(([^)]*)\\)")
                .matcher(text);
        if (!m.find()) return null;
        List<String> types = new ArrayList<>();
        Matcher p = Pattern.compile("\\.param\\s+\\.(\\w+)\\s+\\w+").matcher(m.group(1));
        while (p.find()) types.add(p.group(1));
        return types;
    }

    @Test
    void everyVariantAndConverterIsInItsPtxWithItsArguments() throws IOException {
        String json = resource("attention_variants.json");
        assertTrue(
                json.contains("Arguments, in order: q, k, v"),
                "the \"about\" argument list changed: update this test and tools/gpu_sweep.py");
        List<String> variants = objects(json, "variants"), converters = objects(json, "converters");
        assertFalse(variants.isEmpty(), "no variants");
        List<String> problems = new ArrayList<>();
        List<String> made = new ArrayList<>();
        for (String c : converters) {
            String entry = field(c, "entry"), file = field(c, "file");
            List<String> p = entry == null || file == null ? null : params(file, entry);
            if (p == null) problems.add("converter " + entry + ": no .entry in " + file + ".ptx");
            else if (!p.equals(CONVERTER)) problems.add("converter " + entry + ": parameters " + p);
            if (entry != null) made.add(entry.replaceFirst("^f32_to_", ""));
            String out = field(c, "out");
            if (out != null) made.add(out);
        }
        for (String v : variants) {
            String entry = field(v, "entry"), file = field(v, "file"), in = field(v, "in");
            for (String k : List.of("entry", "file", "precision", "in", "d", "br", "threads", "smem", "capability"))
                if (field(v, k) == null) problems.add(entry + ": no \"" + k + "\"");
            if (entry == null || file == null) continue;
            List<String> p = params(file, entry);
            if (p == null) problems.add(entry + ": no .entry in " + file + ".ptx");
            else if (!p.equals(VARIANT)) problems.add(entry + ": parameters " + p + ", expected " + VARIANT);
            if (in != null && !in.equals("f32") && !made.contains(in))
                problems.add(entry + ": input " + in + " but no converter makes it");
        }
        assertEquals(List.of(), problems);
    }
}
