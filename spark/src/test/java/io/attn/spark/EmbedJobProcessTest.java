package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EmbedJob} as users start it, {@code java ... io.attn.spark.EmbedJob} in its own process: exit 0, the summary
 * as the last line of stdout and {@code _SUCCESS}; bad input: exit 3 and exactly one line on stderr (besides the JVM's
 * own note on the incubator module), no stack trace, before Spark starts (so none of its log lines either).
 */
@Tag("long") // separate JVMs (executors, a process): CI's long tests
class EmbedJobProcessTest {
    @TempDir
    Path dir;

    record Exit(int code, List<String> out, List<String> err) {}

    static Exit java(Path dir, String... args) throws IOException, InterruptedException {
        String flags = System.getProperty("spark.jvm.flags");
        assertTrue(flags != null, "run through Maven: the build passes the JVM flags as spark.jvm.flags");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(flags.trim().split("\\s+")));
        // the class path without this module's test classes (and their log configuration): Spark logs as it would
        // for a user
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> entries = new ArrayList<>();
        for (String e : cp.split(File.pathSeparator)) if (!Path.of(e).endsWith("test-classes")) entries.add(e);
        cmd.addAll(List.of("-Xmx512m", "-cp", String.join(File.pathSeparator, entries), EmbedJob.class.getName()));
        cmd.addAll(List.of(args));
        File out = dir.resolve("stdout").toFile(), err = dir.resolve("stderr").toFile();
        Process p =
                new ProcessBuilder(cmd).redirectOutput(out).redirectError(err).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "EmbedJob did not finish in 120 s");
        return new Exit(
                p.exitValue(),
                Files.readAllLines(out.toPath(), StandardCharsets.UTF_8),
                Files.readAllLines(err.toPath(), StandardCharsets.UTF_8));
    }

    @Test
    void aRunEndsWithTheSummaryLine() throws Exception {
        Path model = Fixtures.tinyBert(dir, true);
        Path in = Files.write(dir.resolve("in.txt"), Fixtures.texts(200), StandardCharsets.UTF_8);
        Path out = dir.resolve("out");
        Exit e = java(
                dir,
                "--model",
                model.toString(),
                "--input",
                in.toString(),
                "--output",
                out.toString(),
                "--master",
                "local[2]",
                "--device",
                "cpu");
        assertEquals(0, e.code(), String.join("\n", e.err()));
        assertTrue(
                EmbedJobTest.SUMMARY.matcher(e.out().getLast()).matches(),
                e.out().toString());
        assertTrue(e.out().getLast().startsWith("{\"rows\": 200,"), e.out().getLast());
        assertTrue(Files.exists(out.resolve("_SUCCESS")));
    }

    @Test
    void aMissingTextColumnIsOneLineAndExit3() throws Exception {
        Path model = Fixtures.tinyBert(dir, false);
        Path in = Files.writeString(dir.resolve("in.jsonl"), "{\"body\": \"the sky\"}\n");
        Path out = dir.resolve("out");
        Exit e = java(dir, "--model", model.toString(), "--input", in.toString(), "--output", out.toString());
        assertEquals(3, e.code());
        assertEquals(
                List.of("attn-spark: input " + in + ": no record among the first 1 has the field \"text\""
                        + " (--text-col)"),
                e.err().stream()
                        .filter(l -> !l.startsWith("WARNING: Using incubator modules"))
                        .toList());
        assertEquals(List.of(), e.out());
        assertFalse(Files.exists(out));
    }
}
