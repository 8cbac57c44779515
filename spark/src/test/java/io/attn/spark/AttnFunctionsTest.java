package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code attn_embed(text)} in Spark SQL: the library's vectors, null for null, settings from a TextEmbedder. */
class AttnFunctionsTest {
    @TempDir
    static Path dir;

    @Test
    void attnEmbedIsTheLibrarysVector() throws Exception {
        SparkSession spark = LocalSpark.get();
        Path model = Fixtures.tinyBert(dir, true);
        LibraryCheck.docs(spark, 2).createOrReplaceTempView("docs");
        AttnFunctions.register(spark, model.toString());
        List<Row> rows = spark.sql("SELECT id, text, attn_embed(text) AS e FROM docs ORDER BY id")
                .collectAsList();
        assertEquals(LibraryCheck.TEXTS.size(), rows.size());
        LibraryCheck.assertRows(model, rows, "e", EmbedderOptions.defaults());
        assertNull(rows.get(5).getAs("e"));

        // registered again with other settings: the same name now pools by CLS, unnormalized
        AttnFunctions.register(
                spark,
                new TextEmbedder()
                        .setModelPath(model.toString())
                        .setPooling("cls")
                        .setNormalize(false)
                        .setDevice("cpu"));
        EmbedderOptions cls =
                EmbedderOptions.defaults().withPooling(Pooling.CLS).withNormalize(false);
        List<Row> some = spark.sql("SELECT id, text, attn_embed(text) AS e FROM docs WHERE id < 40 ORDER BY id")
                .collectAsList();
        LibraryCheck.assertRows(model, some, "e", cls);

        // a literal may be folded on the driver, outside any task: the same vector
        Row lit = spark.sql("SELECT attn_embed('the sky is blue') AS e").first();
        assertArrayEquals(LibraryCheck.embed(model, cls, List.of("the sky is blue"))[0], LibraryCheck.floats(lit, "e"));
    }

    /**
     * An int8 folder ({@code attn quantize}'s, from tests/families/bert) in Spark SQL: each row the library's vector of
     * the same folder, bitwise (its int8 products on the executors as in the library); and not the float model's.
     */
    @Test
    void aQuantizedFolderEmbedsAsInTheLibrary() throws Exception {
        SparkSession spark = LocalSpark.get();
        Path bert = Path.of("../tests/families/bert"), q = dir.resolve("bert-int8");
        io.attn.text.TextModel.read(bert)
                .quantized(new io.attn.engine.Quantization.Options(false, false))
                .writeFolderFrom(bert, q, io.attn.tensor.DType.F32);
        LibraryCheck.docs(spark, 2).createOrReplaceTempView("qdocs");
        AttnFunctions.register(spark, q.toString());
        List<Row> rows = spark.sql("SELECT id, text, attn_embed(text) AS e FROM qdocs WHERE id < 60 ORDER BY id")
                .collectAsList();
        LibraryCheck.assertRows(q, rows, "e", EmbedderOptions.defaults());
        Row first =
                rows.stream().filter(r -> r.getAs("text") != null).findFirst().orElseThrow();
        String text = first.getAs("text");
        float[] fp32 = LibraryCheck.embed(bert, EmbedderOptions.defaults(), List.of(text))[0];
        assertTrue(!java.util.Arrays.equals(fp32, LibraryCheck.floats(first, "e")), "the int8 folder ran as float32");
    }

    @Test
    void aMissingModelIsRefusedAtRegistration() {
        String missing = dir.resolve("nothing-here").toString();
        AttnException e = assertThrows(AttnException.class, () -> AttnFunctions.register(LocalSpark.get(), missing));
        assertTrue(e.getMessage().startsWith("model " + missing + " not found on the driver"), e.getMessage());
    }
}
