package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TextEmbedder} on {@code local[2]}: every param against the library's {@link Embedder} on the same texts
 * (bitwise: the transformer must not change a vector), row order and the other columns kept, nulls, persistence, and
 * bad input refused on the driver with one line naming the column or path.
 */
class TextEmbedderTest {
    @TempDir
    static Path dir;

    static SparkSession spark;
    static Path model;
    static final List<String> TEXTS = LibraryCheck.TEXTS;

    @BeforeAll
    static void setUp() throws Exception {
        spark = LocalSpark.get();
        model = Fixtures.tinyBert(dir, true);
    }

    static Dataset<Row> docs(int partitions) {
        return LibraryCheck.docs(spark, partitions);
    }

    static float[][] library(EmbedderOptions o, List<String> texts) {
        return LibraryCheck.embed(model, o, texts);
    }

    static void assertLibrary(List<Row> rows, String col, EmbedderOptions o) {
        LibraryCheck.assertRows(model, rows, col, o);
    }

    /**
     * {@code task} and {@code promptName} on jina-embeddings-v3's hub folder ({@code tests/families/jina-v3-hub}: task
     * LoRA adapters): the rows get the library's vectors with that task merged (bitwise), which differ from the base
     * model's; an explicit prompt name goes with the task as in the library. The library's task vectors are held to
     * transformers and sentence-transformers by the text module's TaskAdaptersTest.
     */
    @Test
    void aTaskAdapterIsTheLibrarysTask() {
        Path jina = Path.of("../tests/families/jina-v3-hub");
        Dataset<Row> in = docs(2).limit(40);
        for (EmbedderOptions o : List.of(
                EmbedderOptions.defaults().withTask("retrieval.passage"),
                EmbedderOptions.defaults().withTask("retrieval.query").withPromptName("retrieval.passage"))) {
            TextEmbedder t = new TextEmbedder().setModelPath(jina.toString()).setTask(o.task());
            if (o.promptName() != null) t.setPromptName(o.promptName());
            List<Row> rows = t.transform(in).collectAsList();
            LibraryCheck.assertRows(jina, rows, "embedding", o);
            float[] base = LibraryCheck.embed(jina, EmbedderOptions.defaults(), List.of((String)
                    rows.get(0).getAs("text")))[0];
            assertFalse(
                    java.util.Arrays.equals(base, LibraryCheck.floats(rows.get(0), "embedding")),
                    "the task changes the vector");
        }
        AttnException e = assertThrows(AttnException.class, () -> new TextEmbedder()
                .setModelPath(model.toString())
                .setTask("retrieval.query")
                .transform(in)
                .collectAsList());
        assertTrue(
                e.getMessage().contains("task \"retrieval.query\" is not one of its task adapters (it has none"),
                e.getMessage());
    }

    @Test
    void rowsKeepTheirOrderAndColumnsAndGetTheLibrarysVectors() {
        Dataset<Row> in = docs(3);
        Dataset<Row> out = new TextEmbedder().setModelPath(model.toString()).transform(in);
        assertEquals(
                List.of("id", "text", "tag", "embedding"), List.of(out.schema().fieldNames()));
        assertEquals(SQLDataTypes.VectorType(), out.schema().apply("embedding").dataType());
        List<Row> rows = out.collectAsList();
        List<Row> before = in.collectAsList();
        assertEquals(before.size(), rows.size());
        for (int i = 0; i < rows.size(); i++) {
            assertEquals(before.get(i).get(0), rows.get(i).get(0), "row order");
            assertEquals(before.get(i).get(2), rows.get(i).get(2), "other columns");
        }
        assertLibrary(rows, "embedding", EmbedderOptions.defaults());
        assertEquals(Fixtures.HIDDEN, ((Vector) rows.get(0).getAs("embedding")).size());
    }

    @Test
    void thePartitioningChangesNothing() {
        TextEmbedder t = new TextEmbedder().setModelPath(model.toString()).setOutputType("array");
        List<Row> one = t.transform(docs(1)).orderBy("id").collectAsList();
        List<Row> five = t.transform(docs(5)).orderBy("id").collectAsList();
        assertEquals(one, five);
    }

    @Test
    void columnsAndArrayOutput() {
        Dataset<Row> in = docs(2).withColumnRenamed("text", "body");
        Dataset<Row> out = new TextEmbedder()
                .setModelPath(model.toString())
                .setInputCol("body")
                .setOutputCol("vec")
                .setOutputType("array")
                .transform(in)
                .withColumnRenamed("body", "text");
        assertEquals(
                DataTypes.createArrayType(DataTypes.FloatType, false),
                out.schema().apply("vec").dataType());
        assertLibrary(out.collectAsList(), "vec", EmbedderOptions.defaults());
    }

    @Test
    void poolingNormalizeAndMaxLengthOverrideTheModels() {
        for (String pooling : List.of("cls", "max")) {
            TextEmbedder t = new TextEmbedder()
                    .setModelPath(model.toString())
                    .setPooling(pooling)
                    .setNormalize(false)
                    .setMaxLength(5);
            assertLibrary(
                    t.transform(docs(2)).collectAsList(),
                    "embedding",
                    EmbedderOptions.defaults()
                            .withPooling(Pooling.parse(pooling))
                            .withNormalize(false)
                            .withMaxLength(5));
        }
        // and they do change the vectors: the test above would pass for a transformer that ignored them only if the
        // defaults gave the same numbers, which they do not
        float[][] defaults = library(EmbedderOptions.defaults(), TEXTS.subList(10, 11));
        float[][] cls = library(
                EmbedderOptions.defaults()
                        .withPooling(Pooling.CLS)
                        .withNormalize(false)
                        .withMaxLength(5),
                TEXTS.subList(10, 11));
        assertFalse(java.util.Arrays.equals(defaults[0], cls[0]));
    }

    @Test
    void batchLimitsBoundTheBatchesNotTheResults() {
        TextEmbedder t = new TextEmbedder()
                .setModelPath(model.toString())
                .setBatchSize(3)
                .setBatchTokens(32)
                .setThreads(1)
                .setDevice("cpu");
        assertLibrary(t.transform(docs(2)).collectAsList(), "embedding", EmbedderOptions.defaults());
        // a token budget below the longest text is the embedder's one-line refusal, raised in the task
        TextEmbedder tooSmall =
                new TextEmbedder().setModelPath(model.toString()).setBatchTokens(8);
        Exception e =
                assertThrows(Exception.class, () -> tooSmall.transform(docs(1)).count());
        assertTrue(
                LibraryCheck.rootMessage(e).contains("batch token budget 8 is below the max length"),
                LibraryCheck.rootMessage(e));
    }

    @Test
    void devicesAndThreadsReachTheEngine() {
        new TextEmbedder()
                .setModelPath(model.toString())
                .setDevice("auto")
                .setThreads(1)
                .transform(docs(1))
                .count();
        String line = ExecutorModels.devices().stream()
                .filter(l -> l.contains("1 thread") && l.contains("no GPU assigned"))
                .findFirst()
                .orElse(String.join(" | ", ExecutorModels.devices()));
        assertTrue(line.contains("cpu") && line.contains("no GPU assigned to the task by Spark"), line);

        TextEmbedder cuda = new TextEmbedder().setModelPath(model.toString()).setDevice("cuda");
        Exception e =
                assertThrows(Exception.class, () -> cuda.transform(docs(1)).count());
        assertTrue(LibraryCheck.rootMessage(e).contains("device 'cuda' is not usable"), LibraryCheck.rootMessage(e));
    }

    @Test
    void savedAndLoadedAloneAndInAPipeline() throws Exception {
        TextEmbedder t = new TextEmbedder()
                .setModelPath(model.toString())
                .setInputCol("text")
                .setOutputCol("e")
                .setPooling("max")
                .setMaxLength(7)
                .setBatchSize(17)
                .setOutputType("array");
        String path = dir.resolve("embedder").toString();
        t.write().overwrite().save(path);
        TextEmbedder back = TextEmbedder.load(path);
        assertEquals(t.uid(), back.uid());
        assertEquals(t.settings(), back.settings());
        assertEquals("e", back.getOutputCol());
        assertEquals("array", back.getOutputType());
        assertNull(back.getNormalize());

        PipelineModel p = new Pipeline().setStages(new PipelineStage[] {t}).fit(docs(1));
        String pp = dir.resolve("pipeline").toString();
        p.write().overwrite().save(pp);
        List<Row> got = PipelineModel.load(pp).transform(docs(2)).orderBy("id").collectAsList();
        assertEquals(t.transform(docs(2)).orderBy("id").collectAsList(), got);
    }

    @Test
    void badInputIsOneLineOnTheDriver() {
        TextEmbedder t = new TextEmbedder().setModelPath(model.toString());
        AttnException e =
                assertThrows(AttnException.class, () -> t.setInputCol("body").transform(docs(1)));
        assertEquals("TextEmbedder: no input column \"body\" (columns: id, text, tag)", e.getMessage());
        e = assertThrows(AttnException.class, () -> t.setInputCol("id").transform(docs(1)));
        assertEquals("TextEmbedder: input column \"id\" is int, expected string", e.getMessage());
        e = assertThrows(
                AttnException.class,
                () -> t.setInputCol("text").setOutputCol("tag").transform(docs(1)));
        assertEquals("TextEmbedder: output column \"tag\" already exists", e.getMessage());

        String missing = dir.resolve("no-such-model").toString();
        e = assertThrows(
                AttnException.class,
                () -> new TextEmbedder().setModelPath(missing).transform(docs(1)));
        assertTrue(e.getMessage().startsWith("model " + missing + " not found on the driver"), e.getMessage());
        e = assertThrows(AttnException.class, () -> new TextEmbedder().transform(docs(1)));
        assertEquals("modelPath is not set", e.getMessage());
        e = assertThrows(
                AttnException.class,
                () -> new TextEmbedder().setModelPath("hdfs://nn/models/m").transform(docs(1)));
        assertTrue(e.getMessage().contains("ship it with --archives hdfs://nn/models/m#model"), e.getMessage());
    }

    @Test
    void emptyAndNullTexts() {
        List<Row> rows = new ArrayList<>();
        rows.add(RowFactory.create(0, null, "a"));
        rows.add(RowFactory.create(1, "", "b"));
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType)
                .add("text", DataTypes.StringType)
                .add("tag", DataTypes.StringType);
        List<Row> out = new TextEmbedder()
                .setModelPath(model.toString())
                .transform(spark.createDataFrame(rows, schema))
                .collectAsList();
        assertNull(out.get(0).getAs("embedding"));
        assertNotNull(out.get(1).getAs("embedding"));
        assertLibrary(out, "embedding", EmbedderOptions.defaults());
        // all null: no model call at all, still one row each
        rows.set(1, RowFactory.create(1, null, "b"));
        assertEquals(
                2,
                new TextEmbedder()
                        .setModelPath(model.toString())
                        .transform(spark.createDataFrame(rows, schema))
                        .filter("embedding is null")
                        .count());
    }
}
