package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn tune} on a zero budget (one round of the first choice), without writing the user's cache: what it prints
 * (the blocking found, the figures beside the start's, the table entry for this CPU) and its JSON file.
 */
class TuneCommandTest {
    @Test
    void aZeroBudgetTunePrintsTheBlockingTheEntryAndTheFigures(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("tune.json");
        String out =
                DemoCommandTest.runCli("tune", "--seconds", "0", "--no-save", "--print", "--json", json.toString());
        assertTrue(out.contains("tuned in "), out);
        assertTrue(out.matches("(?s).*K step \\d+, A \\d+ rows, B \\d+ columns, A (packed|in place).*"), out);
        assertTrue(out.contains("table entry: new Entry("), out);
        assertTrue(!out.contains("cached in "), out);
        Map<String, Object> j = Json.object(Json.parse(Files.readString(json)), "tune.json");
        assertEquals(1024L, j.get("size"));
        Map<String, Object> tuned = Json.object(j.get("tuned"), "tuned");
        assertTrue(((Long) tuned.get("kc")) >= 16, tuned.toString());
        assertTrue(!j.containsKey("cache"), j.toString());
    }

    @Test
    void badBudgetsAreUsageErrors() {
        assertEquals(Main.EXIT_USAGE, Main.execute("tune", "--seconds", "-1"));
        assertEquals(Main.EXIT_USAGE, Main.execute("tune", "--sweep-rounds", "0"));
    }
}
