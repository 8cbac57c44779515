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
    }

    @Test
    void stringEscapes() {
        assertEquals("a\"b\\c/d\b\f\n\r\t\u00e9\u2603", Json.parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u2603\""));
        assertEquals("\uD83D\uDE00", Json.parse("\"\\ud83d\\ude00\"")); // surrogate pair: U+1F600
        assertEquals("\uD83D\uDE00", Json.parse("\"\uD83D\uDE00\"")); // raw (already decoded) code point
        assertEquals("caf\u00e9", Json.parse("\"caf\u00e9\""));
    }

    @Test
    void errorsNamePosition() {
        badInput(() -> Json.parse("{\"a\": 1,\n \"b\" 2}", "cfg.json"), "cfg.json", "line 2, column 6", "expected ':'");
        badInput(() -> Json.parse("[1, 2,]"), "line 1, column 7");
        badInput(() -> Json.parse("{\"a\":1,\"a\":2}"), "duplicate key \"a\"");
        badInput(() -> Json.parse("\"\\ud83d\""), "unpaired surrogate");
        badInput(() -> Json.parse("\"\\ude00x\""), "unpaired surrogate");
        badInput(() -> Json.parse("\"\\ud83d\\u0041\""), "unpaired surrogate");
        badInput(() -> Json.parse("\"\\u12G4\""), "hex digit");
        badInput(() -> Json.parse("\"\\u12"), "truncated");
        badInput(() -> Json.parse("\"\\x\""), "invalid escape");
        badInput(() -> Json.parse("\"a\tb\""), "control character");
        badInput(() -> Json.parse("\"abc"), "unterminated");
        badInput(() -> Json.parse("01"), "leading zeros");
        badInput(() -> Json.parse("1."), "after '.'");
        badInput(() -> Json.parse("1e"), "exponent");
        badInput(() -> Json.parse("-"), "digit");
        badInput(() -> Json.parse("1e999"), "out of range");
        badInput(() -> Json.parse("NaN"), "unexpected character 'N'");
        badInput(() -> Json.parse("tru"), "unexpected character");
        badInput(() -> Json.parse("{} {}"), "after the JSON value");
        badInput(() -> Json.parse(""), "unexpected end");
        badInput(() -> Json.parse("{\"a\""), "unexpected end");
        badInput(() -> Json.parse("{1:2}"), "string key");
        badInput(() -> Json.parse("// c\n1"), "unexpected character '/'");
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
