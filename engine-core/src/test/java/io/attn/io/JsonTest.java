package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonTest {
    @Test
    void parsesValuesAndKeepsKeyOrder() {
        Object v = Json.parse(" {\"z\": 1, \"a\": [true, false, null, -0.5, 1e3, 12345678901234, \"s\"], \"m\": {}} ");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("z", 1L);
        expected.put("a", Arrays.asList(true, false, null, -0.5, 1000.0, 12345678901234L, "s"));
        expected.put("m", Map.of());
        assertEquals(expected, v);
        assertEquals(List.of("z", "a", "m"), new ArrayList<>(((Map<?, ?>) v).keySet()));
        assertEquals(9.3e18, (Double) Json.parse("9300000000000000000"), 0.0); // beyond long: a double
        assertEquals(-9223372036854775808L, Json.parse("-9223372036854775808"));
        assertNull(Json.parse("null"));
        assertEquals(0L, Json.parse("-0"));
        assertEquals(-0.0, (Double) Json.parse("-0.0"), 0.0);
        assertEquals(0.0, (Double) Json.parse("1.5e-400"), 0.0); // underflow: zero, as Double.parseDouble
        assertEquals(List.of("\u0000\u007f\u2028"), Json.parse("[\"\\u0000\u007f\u2028\"]"));
    }

    @Test
    void stringEscapes() {
        assertEquals("a\"b\\c/d\b\f\n\r\t\u00e9\u2603", Json.parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u2603\""));
        assertEquals("\uD83D\uDE00", Json.parse("\"\\ud83d\\ude00\"")); // surrogate pair: U+1F600
        assertEquals("\uD83D\uDE00", Json.parse("\"\uD83D\uDE00\"")); // raw (already decoded) code point
        assertEquals("caf\u00e9", Json.parse("\"caf\u00e9\""));
    }

    @Test
    void errorsNamePositionAndProblem() {
        // positions are Gson's: at the problem or just after it
        badInput(
                () -> Json.parse("{\"a\": 1,\n \"b\" 2}", "cfg.json"),
                "cfg.json: invalid JSON at line 2, column 7 (offset 15): expected ':'");
        badInput(() -> Json.parse("[1, 2,]"), "line 1, column 8", "unexpected ']' (a trailing comma)");
        badInput(() -> Json.parse("{\"a\":1,}"), "expected a string key");
        badInput(() -> Json.parse("{\"a\":1,\"a\":2}"), "column 11", "duplicate key \"a\"");
        badInput(() -> Json.parse("\"\\ud83d\""), "unpaired surrogate \\ud83d");
        badInput(() -> Json.parse("\"\\ude00x\""), "unpaired surrogate");
        badInput(() -> Json.parse("\"\\ud83d\\u0041\""), "unpaired surrogate");
        badInput(() -> Json.parse("{\"\\udc00\":1}"), "unpaired surrogate"); // keys too
        badInput(() -> Json.parse("\"\ud800\""), "unpaired surrogate"); // raw, not only escaped
        badInput(() -> Json.parse("\"\\u12G4\""), "invalid \\u escape");
        badInput(() -> Json.parse("\"\\u12"), "unterminated escape");
        badInput(() -> Json.parse("\"\\x\""), "invalid escape");
        badInput(() -> Json.parse("\"\\'\""), "invalid escape");
        badInput(() -> Json.parse("\"a\tb\""), "raw control character");
        badInput(() -> Json.parse("\"abc"), "unterminated string");
        badInput(() -> Json.parse("01"), "leading zeros");
        badInput(() -> Json.parse("[1, -01]"), "column 5", "unexpected '-01' (leading zeros");
        badInput(() -> Json.parse("1."), "unexpected '1.' (not a JSON number)");
        badInput(() -> Json.parse("1e"), "not a JSON number");
        badInput(() -> Json.parse("-"), "not a JSON number");
        badInput(() -> Json.parse("[.5]"), "not a JSON number");
        badInput(() -> Json.parse("[+1]"), "unexpected '+1'");
        badInput(() -> Json.parse("1e999"), "number 1e999 is out of range");
        badInput(() -> Json.parse("NaN"), "unexpected 'NaN' (NaN and Infinity are not JSON)");
        badInput(() -> Json.parse("[-Infinity]"), "NaN and Infinity are not JSON");
        badInput(() -> Json.parse("tru"), "unexpected 'tru'");
        badInput(() -> Json.parse("{} {}"), "column 5", "unexpected text after the JSON value");
        badInput(() -> Json.parse("[1]x"), "unexpected text after the JSON value");
        badInput(() -> Json.parse(""), "unexpected end of input");
        badInput(() -> Json.parse("{\"a\""), "unexpected end of input");
        badInput(() -> Json.parse("{\"a\":[1 2]}"), "expected ',' or ']'");
        badInput(() -> Json.parse("{\"a\":1 \"b\":2}"), "expected ',' or '}'");
        badInput(() -> Json.parse("{1:2}"), "unexpected '1'");
        badInput(() -> Json.parse("{'a':1}"), "double quotes");
        badInput(() -> Json.parse("{a:1}"), "unexpected 'a'");
        badInput(() -> Json.parse("[1;2]"), "unexpected ';'");
        badInput(() -> Json.parse("// c\n1"), "unexpected '/' (JSON has no comments)");
        badInput(() -> Json.parse("# c\n1"), "JSON has no comments");
        badInput(() -> Json.parse("\u00a0[1]"), "unexpected U+00A0");
        badInput(() -> Json.parse("\uFEFF[1]"), "byte-order mark"); // text, not a file: read() skips one
        badInput(() -> Json.parse("[1" + "0".repeat(2000) + "]"), "1024 characters");
    }

    @Test
    void deepNestingIsCappedNotAStackOverflow() {
        int ok = Json.MAX_DEPTH;
        Json.parse("[".repeat(ok) + "]".repeat(ok));
        badInput(() -> Json.parse("[".repeat(ok + 1) + "]".repeat(ok + 1)), "nesting deeper than 256");
        badInput(() -> Json.parse("[".repeat(1_000_000)), "nesting deeper");
        badInput(() -> Json.parse("{\"a\":".repeat(100_000)), "nesting deeper");
    }

    @Test
    void readsFiles(@TempDir Path dir) throws IOException {
        var p = dir.resolve("config.json");
        Files.write(p, "\uFEFF{\"d_model\": 512, \"name\": \"caf\u00e9\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals(Map.of("d_model", 512L, "name", "caf\u00e9"), Json.read(p));
        Files.write(p, new byte[] {'"', (byte) 0xC3, '"'});
        badInput(() -> Json.read(p), "config.json", "not valid UTF-8");
        Files.write(p, "{\"a\": }".getBytes(StandardCharsets.UTF_8));
        badInput(() -> Json.read(p), "config.json", "line 1, column 7");
        badInput(() -> Json.read(dir.resolve("none.json")), "none.json", "file not found");
    }

    @Test
    void objectsAndArrays(@TempDir Path dir) throws IOException {
        assertEquals(Map.of("a", 1L), Json.parseObject("{\"a\":1}", "c.json"));
        badInput(() -> Json.parseObject("[1]", "c.json"), "c.json: must be a JSON object");
        badInput(() -> Json.parseObject("{\"a\":", "c.json"), "c.json: invalid JSON");
        assertEquals(List.of(1L), Json.array(Json.parse("[1]"), "m.json"));
        badInput(() -> Json.array(Map.of(), "m.json"), "m.json: must be a JSON array");
        var p = dir.resolve("cfg.json");
        Files.writeString(p, "[]");
        badInput(() -> Json.readObject(p), p + ": must be a JSON object");
        Files.writeString(p, "{\"module\":\"X\"}");
        assertEquals(Map.of("module", "X"), Json.readObject(p));
    }

    @Test
    void topLevelMemberStreamsPastTheRest(@TempDir Path dir) throws IOException {
        var p = dir.resolve("tokenizer.json");
        // the vocabulary before the member is skipped, not kept; what follows the member is not read
        Files.writeString(
                p, "\uFEFF{\"model\":{\"vocab\":{\"a\":1,\"b\":[2,{}]}},\"truncation\":{\"max_length\":128},\"x\":[}");
        assertEquals(Map.of("max_length", 128L), Json.topLevelMember(p, "truncation"));
        Files.writeString(p, "{\"model\":{},\"truncation\":null}");
        assertNull(Json.topLevelMember(p, "truncation"));
        assertNull(Json.topLevelMember(p, "absent"));
        Files.writeString(p, "[1]");
        badInput(() -> Json.topLevelMember(p, "truncation"), p + ": must be a JSON object");
        Files.writeString(p, "{\"model\":" + "[".repeat(10_000));
        badInput(() -> Json.topLevelMember(p, "truncation"), "nesting deeper than 256");
        Files.writeString(p, "{\"model\":{\"a\" 1}}");
        badInput(() -> Json.topLevelMember(p, "truncation"), p + ": invalid JSON at line 1, column 16: expected ':'");
        Files.writeString(p, "{\"model\":tru}");
        badInput(() -> Json.topLevelMember(p, "truncation"), "malformed JSON");
        Files.write(p, new byte[] {'{', '"', (byte) 0xC3, '"', ':', '1', '}'});
        badInput(() -> Json.topLevelMember(p, "truncation"), "not valid UTF-8");
        badInput(() -> Json.topLevelMember(dir.resolve("none.json"), "truncation"), "file not found");
    }

    @Test
    void textFieldGivesOneVerdictPerLine() {
        String at = "in.jsonl: line 4";
        assertEquals("a", Json.textField("{\"text\":\"a\",\"n\":1}", "text", at));
        assertEquals("b", Json.textField("\uFEFF {\"text\": \"b\"} ", "text", at));
        assertNull(Json.textField("{\"text\":null}", "text", at));
        assertNull(Json.textField("{\"body\":\"x\"}", "text", at));
        badInput(
                () -> Json.textField("{'text': 'a'}", "text", at),
                at + " is not a JSON object (invalid JSON at column 3: unexpected ''' (strings and keys take double"
                        + " quotes))");
        badInput(() -> Json.textField("{\"text\":\"a\"} x", "text", at), "unexpected text after the JSON value");
        badInput(() -> Json.textField("[\"a\"]", "text", at), at + " is not a JSON object");
        badInput(() -> Json.textField("\"a\"", "text", at), at + " is not a JSON object");
        badInput(() -> Json.textField("{\"text\":3}", "text", at), at + ": field \"text\" is not a string");
        badInput(() -> Json.textField("{\"text\":[\"a\"]}", "text", at), "is not a string");
    }

    @Test
    void writerRoundTrips() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "q\"\\\n\u0001\u00e9\uD83D\uDE00");
        m.put("i", 42L);
        m.put("d", 0.1);
        m.put("whole", 3.0);
        m.put("big", 1.5e300);
        m.put("b", true);
        m.put("n", null);
        m.put("l", Arrays.asList(1L, List.of(), Map.of()));
        String text = Json.write(m);
        assertEquals(
                "{\"s\":\"q\\\"\\\\\\n\\u0001\u00e9\uD83D\uDE00\",\"i\":42,\"d\":0.1,\"whole\":3.0,\"big\":1.5E300,"
                        + "\"b\":true,\"n\":null,\"l\":[1,[],{}]}",
                text);
        assertEquals(m, Json.parse(text));
        badInput(() -> Json.write(Double.NaN), "non-finite");
        badInput(() -> Json.write(new Object()), "cannot write");
    }
}
