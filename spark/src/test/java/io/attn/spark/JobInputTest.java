package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.fixtures.JsonLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job's JSON lines get the verdict every reader of JSON lines gives ({@link JsonLines}: {@code attn embed}'s
 * {@code TextLinesTest} runs the same lines), in a task ({@link JobInput#textOf}) and in the driver's check of the
 * first records ({@link JobInput#inspect}); a record without the text gives a null text here.
 */
class JobInputTest {
    @TempDir
    Path dir;

    @Test
    void jsonLinesGetTheSharedVerdict() throws IOException {
        Path f = dir.resolve("in.jsonl");
        for (JsonLines.Line l : JsonLines.LINES) {
            String where = "input record 7";
            Files.writeString(f, "\n" + l.json() + "\n"); // after a blank line: the record is line 2
            if (l.error() == null) {
                assertEquals(l.text(), JobInput.textOf(l.json(), JsonLines.FIELD, where), l.json());
                if (l.text() != null || l.json().contains("\"text\"")) // the field is there: the check passes
                JobInput.inspect(f.toString(), JsonLines.FIELD, new Configuration());
                continue;
            }
            AttnException e = assertThrows(
                    AttnException.class, () -> JobInput.textOf(l.json(), JsonLines.FIELD, where), l.json());
            assertTrue(
                    e.getMessage().startsWith(where) && e.getMessage().contains(l.error()),
                    l.json() + ": " + e.getMessage());
            e = assertThrows(
                    AttnException.class,
                    () -> JobInput.inspect(f.toString(), JsonLines.FIELD, new Configuration()),
                    l.json());
            assertTrue(
                    e.getMessage().startsWith("input " + f + ": line 2")
                            && e.getMessage().contains(l.error()),
                    l.json() + ": " + e.getMessage());
        }
    }
}
