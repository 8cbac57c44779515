package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The judge of the Spark tests: the library's {@link Embedder} (what {@code attn embed} runs) on the same texts, in one
 * JVM without Spark. Vectors must be bitwise equal: the Spark layer moves them, it must not change them.
 */
final class LibraryCheck {
    static final List<String> TEXTS = Fixtures.texts(300);

    private LibraryCheck() {}

    /** {@code (id int, text string, tag string)} over {@link #TEXTS}, text null at 5 and 250, in that many parts. */
    static Dataset<Row> docs(SparkSession spark, int partitions) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < TEXTS.size(); i++)
            rows.add(RowFactory.create(i, i == 5 || i == 250 ? null : TEXTS.get(i), "t" + (i % 3)));
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType)
                .add("text", DataTypes.StringType)
                .add("tag", DataTypes.StringType);
        return spark.createDataFrame(rows, schema).repartition(partitions).sortWithinPartitions("id");
    }

    /** The library's vectors (CPU, one thread). */
    static float[][] embed(Path model, EmbedderOptions o, List<String> texts) {
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(1));
                Embedder m = Embedder.load(e, model, o)) {
            return m.embed(texts);
        }
    }

    /** A vector or {@code array<float>} cell as floats. */
    static float[] floats(Row r, String col) {
        if (r.getAs(col) instanceof Vector v) {
            double[] d = v.toArray();
            float[] f = new float[d.length];
            for (int i = 0; i < d.length; i++) f[i] = (float) d[i];
            return f;
        }
        List<Float> l = r.getList(r.fieldIndex(col));
        float[] f = new float[l.size()];
        for (int i = 0; i < f.length; i++) f[i] = l.get(i);
        return f;
    }

    /** Every row's vector (column {@code col}) is the library's vector of its {@code text}; a null text, null. */
    static void assertRows(Path model, List<Row> rows, String col, EmbedderOptions o) {
        List<String> texts = new ArrayList<>();
        for (Row r : rows) if (r.getAs("text") != null) texts.add(r.getAs("text"));
        float[][] want = embed(model, o, texts);
        int k = 0;
        for (Row r : rows) {
            if (r.getAs("text") == null) {
                assertNull(r.getAs(col), "row " + r);
                continue;
            }
            assertArrayEquals(want[k++], floats(r, col), () -> "row " + r);
        }
        assertEquals(texts.size(), k);
    }

    /** The message at the bottom of a failure (what a task threw, under Spark's wrappers). */
    static String rootMessage(Throwable t) {
        while (t.getCause() != null) t = t.getCause();
        return t.getMessage();
    }
}
