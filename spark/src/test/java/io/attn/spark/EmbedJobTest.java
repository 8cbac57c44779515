package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.text.EmbedderOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EmbedJob} in this JVM (it runs in the tests' {@code local[2]} session): the output's exact columns, ids that
 * are the input's record numbers whatever the partitioning, the library's vectors, JSONL nulls, Parquet input, the
 * summary line, and bad input refused before any task with one line, an exit code and nothing left at the output path.
 * {@link EmbedJobProcessTest} runs it as its own process.
 */
class EmbedJobTest {
    @TempDir
    static Path dir;

    static SparkSession spark;
    static Path model;
    static final Pattern SUMMARY =
            Pattern.compile("\\{\"rows\": (\\d+), \"seconds\": [0-9.]+, \"rows_per_s\": [0-9.]+\\}");

    @BeforeAll
    static void setUp() throws Exception {
        spark = LocalSpark.get();
        model = Fixtures.tinyBert(dir, true);
    }

    record Run(int code, String out, String err) {
        String lastOut() {
            String[] l = out.strip().split("\n");
            return l[l.length - 1];
        }
    }

    static synchronized Run run(String... args) {
        PrintStream out = System.out, err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream(), e = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
            int code = EmbedJob.run(args);
            return new Run(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    static Run job(Path in, Path out, String... more) {
        List<String> a = new ArrayList<>(
                List.of("--model", model.toString(), "--input", in.toString(), "--output", out.toString()));
        a.addAll(List.of(more));
        return run(a.toArray(String[]::new));
    }

    /** The output, checked to have exactly the contract's columns and {@code _SUCCESS}, sorted by id. */
    static List<Row> output(Path out) {
        assertTrue(Files.exists(out.resolve("_SUCCESS")), "no _SUCCESS in " + out);
        Dataset<Row> df = spark.read().parquet(out.toString());
        StructType s = df.schema();
        assertEquals(List.of("id", "text", "embedding"), List.of(s.fieldNames()));
        assertEquals(DataTypes.LongType, s.apply("id").dataType());
        assertEquals(DataTypes.StringType, s.apply("text").dataType());
        // Parquet gives every array back as containsNull = true
        assertEquals(
                DataTypes.createArrayType(DataTypes.FloatType, true),
                s.apply("embedding").dataType());
        return df.orderBy("id").collectAsList();
    }

    @Test
    void aTextFileGetsLineNumbersAndTheLibrarysVectorsWhateverThePartitioning() throws Exception {
        List<String> lines = Fixtures.texts(500);
        Path in = Files.write(dir.resolve("in.txt"), lines, StandardCharsets.UTF_8);
        List<Row> first = null;
        for (String parts : List.of("1", "4")) {
            Path out = dir.resolve("out-" + parts);
            Run r = job(in, out, "--partitions", parts, "--device", "cpu");
            assertEquals(0, r.code(), r.err());
            var m = SUMMARY.matcher(r.lastOut());
            assertTrue(m.matches(), r.out());
            assertEquals("500", m.group(1));
            List<Row> rows = output(out);
            assertEquals(500, rows.size());
            for (int i = 0; i < rows.size(); i++) {
                assertEquals(i, rows.get(i).getLong(0));
                assertEquals(lines.get(i), rows.get(i).getString(1), "line " + i);
            }
            LibraryCheck.assertRows(model, rows, "embedding", EmbedderOptions.defaults());
            if (first == null) first = rows;
            else assertEquals(first, rows);
        }
    }

    @Test
    void jsonlRecordsWithANullOrMissingTextKeepTheirRows() throws Exception {
        Path in = Files.writeString(
                dir.resolve("in.jsonl"),
                "{\"body\": \"the sky is blue\"}\n{\"body\": null}\n\n{\"id\": 7}\n{\"body\": \"\", \"x\": [1]}\n"
                        + "{\"body\": \"a cat sat\"}\n");
        Path out = dir.resolve("out-jsonl");
        Run r = job(in, out, "--text-col", "body", "--batch-size", "2", "--pooling", "CLS", "--no-normalize");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.lastOut().startsWith("{\"rows\": 5,"), r.out());
        List<Row> rows = output(out);
        assertEquals(5, rows.size());
        assertNull(rows.get(1).getAs("text"));
        assertNull(rows.get(2).getAs("text"));
        assertEquals("a cat sat", rows.get(4).getAs("text"));
        assertEquals(4, rows.get(4).getLong(0));
        LibraryCheck.assertRows(
                model,
                rows,
                "embedding",
                EmbedderOptions.defaults().withPooling(io.attn.text.Pooling.CLS).withNormalize(false));
    }

    @Test
    void parquetRecordsAreNumberedInFileNameOrder() {
        Path in = dir.resolve("in-parquet");
        LibraryCheck.docs(spark, 3).withColumnRenamed("text", "body").write().parquet(in.toString());
        List<String> expected = new ArrayList<>();
        try (var files = Files.list(in)) {
            for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".parquet"))
                    .sorted()
                    .toList())
                for (Row r : spark.read().parquet(f.toString()).collectAsList()) expected.add(r.getAs("body"));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Path out = dir.resolve("out-parquet");
        Run r = job(in, out, "--text-col", "body", "--partitions", "2");
        assertEquals(0, r.code(), r.err());
        List<Row> rows = output(out);
        assertEquals(expected.size(), rows.size());
        for (int i = 0; i < rows.size(); i++) {
            assertEquals(i, rows.get(i).getLong(0));
            assertEquals(expected.get(i), rows.get(i).getString(1), "record " + i);
        }
        LibraryCheck.assertRows(model, rows, "embedding", EmbedderOptions.defaults());
    }

    /** A failed run: the code, exactly one line on stderr (ours, no stack trace), nothing at the output path. */
    static void assertRefused(Run r, int code, String line, Path out) {
        assertEquals(code, r.code(), r.err());
        assertEquals(List.of("attn-spark: " + line), r.err().strip().lines().toList());
        assertEquals("", r.out());
        assertFalse(Files.exists(out), out + " was left behind");
    }

    @Test
    void badInputIsRefusedBeforeAnyTaskWithOneLine() throws Exception {
        Path txt = Files.write(dir.resolve("bad.txt"), List.of("the sky"));
        Path out = dir.resolve("never");
        Path noModel = dir.resolve("no-model");
        assertRefused(
                run("--model", noModel.toString(), "--input", txt.toString(), "--output", out.toString()),
                3,
                "model " + noModel + ": no such file or directory",
                out);
        Path noInput = dir.resolve("nothing.txt");
        assertRefused(job(noInput, out), 3, "input " + noInput + ": no such file or directory", out);
        Path csv = Files.writeString(dir.resolve("in.csv"), "a,b\n");
        assertRefused(job(csv, out), 3, "input " + csv + ": not a .txt, .jsonl or .parquet file", out);

        Path jsonl = Files.writeString(dir.resolve("nofield.jsonl"), "{\"body\": \"x\"}\n{\"body\": \"y\"}\n");
        assertRefused(
                job(jsonl, out),
                3,
                "input " + jsonl + ": no record among the first 2 has the field \"text\" (--text-col)",
                out);

        Path pq = dir.resolve("in-pq");
        LibraryCheck.docs(spark, 1).write().parquet(pq.toString());
        String part;
        try (var files = Files.list(pq)) {
            part = files.filter(f -> f.toString().endsWith(".parquet"))
                    .findFirst()
                    .orElseThrow()
                    .toString();
        }
        assertRefused(
                job(pq, out, "--text-col", "body"),
                3,
                "input " + part + ": no column \"body\" (--text-col; columns: id, text, tag)",
                out);
        assertRefused(
                job(pq, out, "--text-col", "id"), 3, "input " + part + ": column \"id\" is int32, not a string", out);

        Path exists = Files.createDirectories(dir.resolve("exists"));
        Files.writeString(exists.resolve("keep.txt"), "mine");
        Run r = job(txt, exists);
        assertEquals(3, r.code());
        assertEquals(
                List.of("attn-spark: output " + exists + " already exists (EmbedJob does not overwrite)"),
                r.err().strip().lines().toList());
        assertEquals("mine", Files.readString(exists.resolve("keep.txt")));

        Run usage = run("--model", model.toString(), "--input", txt.toString());
        assertEquals(2, usage.code());
        assertEquals(
                List.of("attn-spark: --output is required", JobArgs.USAGE),
                usage.err().strip().lines().toList());
        assertEquals(2, job(txt, out, "--partitions", "many").code());
        assertEquals(2, job(txt, out, "--device", "tpu").code());
    }

    @Test
    void aRecordFailingInATaskLeavesNoOutput() throws Exception {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 50; i++) s.append("{\"text\": \"the sky\"}\n");
        s.append("{\"text\": 5}\n");
        Path in = Files.writeString(dir.resolve("late-bad.jsonl"), s);
        Path out = dir.resolve("out-late-bad");
        Run r = job(in, out, "--partitions", "2");
        assertEquals(3, r.code(), r.err());
        assertEquals(
                "attn-spark: input record 50: field \"text\" is not a string",
                r.err().strip().lines().reduce((a, b) -> b).orElseThrow());
        assertFalse(Files.exists(out), "partial output left at " + out);
    }
}
