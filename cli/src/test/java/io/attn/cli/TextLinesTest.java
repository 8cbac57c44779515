package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.fixtures.JsonLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn embed}'s JSON lines get the verdict every reader of JSON lines gives ({@link JsonLines}: the Spark job's
 * {@code JobInputTest} runs the same lines); a record without the text is an error here.
 */
class TextLinesTest {
    @TempDir
    Path dir;

    @Test
    void jsonLinesGetTheSharedVerdict() throws IOException {
        Path f = dir.resolve("in.jsonl");
        for (JsonLines.Line l : JsonLines.LINES) {
            Files.writeString(f, "\n" + l.json() + "\n"); // after a blank line: the record is line 2
            String where = f + ": line 2";
            if (l.error() == null && l.text() != null) {
                assertEquals(List.of(l.text()), read(f), l.json());
                continue;
            }
            AttnException e = assertThrows(AttnException.class, () -> read(f), l.json());
            String want = l.error() == null ? " has no string field \"text\"" : l.error();
            assertTrue(
                    e.getMessage().startsWith(where) && e.getMessage().contains(want),
                    l.json() + ": " + e.getMessage());
            assertEquals(AttnException.Code.BAD_INPUT, e.code());
        }
    }

    private static List<String> read(Path f) {
        try (TextLines t = TextLines.open(f, JsonLines.FIELD)) {
            return t.next();
        }
    }
}
