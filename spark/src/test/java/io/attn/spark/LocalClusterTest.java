package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.text.EmbedderOptions;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two executor JVMs ({@code local-cluster[2,1,1024]}): the model ships to them as an archive ({@code spark.archives}),
 * each executor loads it exactly once for all its tasks and jobs, the vectors are the library's; a model path that
 * only the driver sees fails in the tasks with one line naming the path and the executor.
 *
 * <p>The Worker starts executors from {@code SPARK_HOME/jars} (the build sets {@code SPARK_HOME} to {@code
 * target/spark-home}): this test fills it with links to the test class path's jars, and hands the class directories
 * (this module's and the reactor's) to the executors as {@code spark.executor.extraClassPath}.
 */
@Tag("long") // separate JVMs (executors, a process): CI's long tests
class LocalClusterTest {
    static SparkSession spark;
    static Path work;

    @BeforeAll
    static void startCluster() throws IOException, InterruptedException {
        String home = System.getenv("SPARK_HOME");
        assertTrue(
                home != null && "2.13".equals(System.getenv("SPARK_SCALA_VERSION")),
                "run through Maven: the build sets SPARK_HOME and SPARK_SCALA_VERSION for local-cluster");
        work = Files.createDirectories(Path.of(home).getParent().resolve("local-cluster"));
        List<String> dirs = linkJars(Path.of(home));
        LocalSpark.stop();
        spark = SparkSession.builder()
                .master("local-cluster[2,1,1024]")
                .appName("attn-spark local-cluster test")
                .config("spark.ui.enabled", "false")
                .config("spark.executor.extraClassPath", String.join(File.pathSeparator, dirs))
                .config("spark.archives", zip(Fixtures.tinyBert(work, true)) + "#tiny-model")
                .getOrCreate();
        for (int i = 0;
                i < 600 && spark.sparkContext().getExecutorMemoryStatus().size() < 3;
                i++) Thread.sleep(100);
        assertEquals(3, spark.sparkContext().getExecutorMemoryStatus().size(), "two executors and the driver");
    }

    @AfterAll
    static void stopCluster() {
        if (spark != null) spark.stop();
    }

    /** Links the class path's jars into {@code home/jars}; returns its directories. */
    static List<String> linkJars(Path home) throws IOException {
        Path jars = Files.createDirectories(home.resolve("jars"));
        try (Stream<Path> old = Files.list(jars)) {
            for (Path p : old.toList()) Files.delete(p);
        }
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> dirs = new ArrayList<>();
        for (String e : cp.split(File.pathSeparator)) {
            Path p = Path.of(e);
            if (Files.isDirectory(p)) dirs.add(p.toAbsolutePath().toString());
            else if (e.endsWith(".jar") && Files.exists(p)) {
                Path link = jars.resolve(p.getFileName());
                if (!Files.exists(link)) Files.createSymbolicLink(link, p.toAbsolutePath());
            }
        }
        return dirs;
    }

    static String zip(Path dir) throws IOException {
        Path zip = dir.resolveSibling(dir.getFileName() + ".zip");
        try (OutputStream o = Files.newOutputStream(zip);
                ZipOutputStream z = new ZipOutputStream(o);
                Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                z.putNextEntry(new ZipEntry(dir.relativize(f).toString()));
                Files.copy(f, z);
                z.closeEntry();
            }
        }
        return zip.toString();
    }

    /** Each task's executor id and the model loads of its JVM after the task embedded its rows. */
    static Map<String, Integer> loadsByExecutor(Dataset<Row> embedded) {
        List<String> seen = embedded.javaRDD()
                .mapPartitions((Iterator<Row> rows) -> {
                    while (rows.hasNext()) rows.next();
                    return List.of(SparkEnv.get().executorId() + "=" + ExecutorModels.loads())
                            .iterator();
                })
                .collect();
        Map<String, Integer> loads = new HashMap<>();
        for (String s : seen) {
            String[] kv = s.split("=");
            loads.merge(kv[0], Integer.parseInt(kv[1]), Math::max);
        }
        return loads;
    }

    @Test
    void theModelShipsAndLoadsOncePerExecutor() {
        TextEmbedder t =
                new TextEmbedder().setModelPath("tiny-model").setDevice("cpu").setOutputType("array");
        Dataset<Row> docs = LibraryCheck.docs(spark, 8);
        for (int job = 0; job < 2; job++) {
            Map<String, Integer> loads = loadsByExecutor(t.transform(docs));
            assertEquals(Map.of("0", 1, "1", 1), loads, "model loads per executor after job " + job);
        }
        List<Row> rows = t.transform(docs).orderBy("id").collectAsList();
        Path local = Path.of(org.apache.spark.SparkFiles.get("tiny-model"));
        LibraryCheck.assertRows(local, rows, "embedding", EmbedderOptions.defaults());
    }

    @Test
    void aModelOnlyTheDriverSeesFailsInTheTasksWithOneLine() throws IOException {
        Path cwd = Path.of("").toAbsolutePath();
        Path onlyHere = Fixtures.tinyBert(Files.createDirectories(work.resolve("driver-only")), false);
        String relative = cwd.relativize(onlyHere).toString(); // executors run in their own work directories
        TextEmbedder t = new TextEmbedder().setModelPath(relative).setDevice("cpu");
        Exception e = assertThrows(
                Exception.class, () -> t.transform(LibraryCheck.docs(spark, 2)).count());
        String m = LibraryCheck.rootMessage(e);
        assertTrue(
                m.matches("model " + java.util.regex.Pattern.quote(relative) + " not found on executor [01] \\(.+\\)"
                        + " \\(give a path every node sees, or ship the model with --files or --archives and give its"
                        + " name\\)"),
                m);
    }
}
