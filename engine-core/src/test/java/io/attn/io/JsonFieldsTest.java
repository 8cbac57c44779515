package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonFieldsTest {
    static JsonFields fields(String json) {
        return JsonFields.of(Json.parse(json, "cfg.json"), "cfg.json");
    }

    @Test
    void typedFieldsWithDefaults() {
        JsonFields f =
                fields("{\"n\":3,\"w\":4.0,\"x\":0.5,\"b\":true,\"s\":\"gelu\",\"z\":null,\"o\":{\"m\":2},\"a\":[1]}");
        assertEquals(3, f.integer("n", 0));
        assertEquals(4, f.integer("w", 0)); // integral double
        assertEquals(7, f.integer("absent", 7));
        assertEquals(7, f.integer("z", 7)); // JSON null: the default
        assertEquals(0.5, f.number("x", 0), 0);
        assertEquals(3.0, f.number("n", 0), 0);
        assertEquals(true, f.bool("b", false));
        assertEquals("gelu", f.string("s", "relu"));
        assertEquals("relu", f.string("z", "relu"));
        assertEquals(2, f.object("o").integer("m", 0));
        assertNull(f.object("absent"));
        assertEquals(List.of(1L), f.array("a"));
        assertNull(f.array("z"));
        assertEquals("cfg.json", f.source());
        assertEquals(3L, f.get("n"));
    }

    @Test
    void errorsNameTheFileAndTheKey() {
        JsonFields f =
                fields("{\"s\":\"32\",\"x\":1.5,\"big\":1000000000,\"neg\":-1000000000,\"n\":1,\"o\":{\"m\":\"x\"}}");
        badInput(() -> f.integer("s", 0), "cfg.json: config key \"s\" must be an integer, got \"32\"");
        badInput(() -> f.integer("x", 0), "cfg.json: config key \"x\" must be an integer, got 1.5");
        badInput(
                () -> f.integer("big", 0),
                "cfg.json: config key \"big\" is 1000000000, out of range (at most 999999999)");
        badInput(() -> f.integer("neg", 0), "out of range");
        assertEquals(999_999_999, fields("{\"k\":999999999}").integer("k", 0));
        badInput(() -> f.number("s", 0), "cfg.json: config key \"s\" must be a number, got \"32\"");
        badInput(() -> f.bool("n", false), "cfg.json: config key \"n\" must be true or false, got 1");
        badInput(() -> f.string("n", ""), "cfg.json: config key \"n\" must be a string, got 1");
        badInput(() -> f.object("n"), "cfg.json: config key \"n\" must be an object, got 1");
        badInput(() -> f.array("n"), "cfg.json: config key \"n\" must be an array, got 1");
        badInput(() -> f.object("o").integer("m", 0), "cfg.json: config key \"o.m\" must be an integer, got \"x\"");
        String longValue = "\"" + "v".repeat(500) + "\"";
        var e = badInput(() -> fields("{\"k\":" + longValue + "}").integer("k", 0), "must be an integer, got \"vvv");
        assertFalse(e.getMessage().length() > 200, e.getMessage());
        badInput(() -> JsonFields.of(List.of(), "m.json"), "m.json: must be a JSON object");
    }

    @Test
    void unknownKeysAreRefused() {
        JsonFields f = fields("{\"module\":\"M\",\"d_model\":8,\"kdim\":4}");
        f.allow("module").allow(List.of("d_model"));
        badInput(() -> f.checkNoUnknown("module M"), "cfg.json: unknown config key \"kdim\" for module M");
        f.allow("kdim");
        f.checkNoUnknown("module M");
    }

    @Test
    void readsFiles(@TempDir Path dir) throws IOException {
        Path p = dir.resolve("config.json");
        Files.writeString(p, "{\"hidden_size\":32}");
        assertEquals(32, JsonFields.read(p).integer("hidden_size", 0));
        Files.writeString(p, "[1]");
        badInput(() -> JsonFields.read(p), p + ": must be a JSON object");
    }
}
