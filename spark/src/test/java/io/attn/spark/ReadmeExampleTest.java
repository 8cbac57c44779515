package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Spark section's Java example (README.md, "Spark"), verbatim between the markers
 * (checked below) with the paths made the test's, run on {@code local[2]}.
 */
class ReadmeExampleTest {
    @TempDir
    Path dir;

    @Test
    void theExampleRuns() throws Exception {
        SparkSession spark = LocalSpark.get();
        String modelDir = Fixtures.tinyBert(dir, true).toString();
        Files.write(dir.resolve("docs.txt"), List.of("the sky is blue", "what colour is the sky?", ""));
        String docsPath = dir.resolve("docs.txt").toString(),
                pipelinePath = dir.resolve("pipeline").toString();
        // ---- README example
        Dataset<Row> docs = spark.read().text(docsPath).withColumnRenamed("value", "text");
        TextEmbedder embed = new TextEmbedder()
                .setModelPath(modelDir) // a folder every node sees, or the name of one shipped with --archives
                .setInputCol("text")
                .setOutputCol("embedding") // ml.linalg.Vector; setOutputType("array") for array<float>
                .setBatchTokens(4096) // tokens per forward pass: bounds a task's working memory
                .setDevice("auto"); // the task's GPU when Spark assigned one, else the CPU
        PipelineModel pipeline =
                new Pipeline().setStages(new PipelineStage[] {embed}).fit(docs);
        pipeline.write().overwrite().save(pipelinePath); // saves the settings and the model path, not the weights
        Dataset<Row> embedded = PipelineModel.load(pipelinePath).transform(docs);
        AttnFunctions.register(spark, embed); // SQL: attn_embed(text) -> array<float>
        docs.createOrReplaceTempView("docs");
        Dataset<Row> viaSql = spark.sql("SELECT text, attn_embed(text) AS embedding FROM docs");
        // ---- end of example
        assertEquals(3, embedded.count());
        LibraryCheck.assertRows(
                Path.of(modelDir), embedded.collectAsList(), "embedding", io.attn.text.EmbedderOptions.defaults());
        LibraryCheck.assertRows(
                Path.of(modelDir), viaSql.collectAsList(), "embedding", io.attn.text.EmbedderOptions.defaults());
    }

    /** The section shows the statements of the test above (modulo paths and line breaks). */
    @Test
    void theSectionShowsThisExample() throws Exception {
        Path section = Path.of("../README.md");
        String text = Files.readString(section).replaceAll("\\s+", "");
        String src = Files.readString(Path.of("src/test/java/io/attn/spark/ReadmeExampleTest.java"));
        String example = src.substring(src.indexOf("// ---- README example"), src.indexOf("// ---- end of example"))
                .replaceAll("\\s+", "");
        String[] mustAppear = {
            "new TextEmbedder()",
            ".setInputCol(\"text\")",
            ".setOutputCol(\"embedding\")",
            ".setBatchTokens(4096)",
            ".setDevice(\"auto\");",
            "new Pipeline().setStages(new PipelineStage[] {embed}).fit(docs);",
            "PipelineModel.load(",
            ".transform(docs);",
            "AttnFunctions.register(spark, embed);",
            "attn_embed(text) AS embedding FROM docs"
        };
        for (String s : mustAppear) {
            s = s.replaceAll("\\s+", "");
            assertTrue(example.contains(s), "test lost: " + s);
            assertTrue(text.contains(s), section + " lost: " + s);
        }
    }
}
