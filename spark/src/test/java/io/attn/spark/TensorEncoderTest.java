package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Tensors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.ml.linalg.Vectors;
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
 * {@link TensorEncoder} on {@code local[2]}: each row's output is the model's output for that sequence alone (as
 * {@code attn run} computes it), for sequences of mixed lengths, float and double arrays and vectors; nulls; the batch
 * size; a config given apart; persistence; a row of the wrong length named with its column.
 */
class TensorEncoderTest {
    @TempDir
    static Path dir;

    static SparkSession spark;
    static Path model;
    static final int E = Fixtures.ENCODER_WIDTH;
    static final List<float[]> SEQS = new ArrayList<>();

    @BeforeAll
    static void setUp() {
        spark = LocalSpark.get();
        model = Fixtures.encoderLayer(dir);
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 60; i++) {
            float[] x = new float[(1 + i % 6) * E];
            for (int k = 0; k < x.length; k++) x[k] = (float) r.nextDouble(-1, 1);
            SEQS.add(x);
        }
    }

    /** {@code (id int, x array<float>)}, row 7 null, in {@code partitions} parts. */
    static Dataset<Row> sequences(int partitions) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < SEQS.size(); i++) rows.add(RowFactory.create(i, i == 7 ? null : boxed(SEQS.get(i))));
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType)
                .add("x", DataTypes.createArrayType(DataTypes.FloatType));
        return spark.createDataFrame(rows, schema).repartition(partitions).sortWithinPartitions("id");
    }

    static Float[] boxed(float[] x) {
        Float[] b = new Float[x.length];
        for (int i = 0; i < x.length; i++) b[i] = x[i];
        return b;
    }

    /** Every row's output is the model's output for its sequence alone. */
    static void assertAlone(List<Row> rows, String col) {
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(1));
                AttnModel m = e.load(model)) {
            assertEquals(SEQS.size(), rows.size());
            for (Row r : rows) {
                int id = r.getInt(r.fieldIndex("id"));
                if (id == 7) {
                    assertNull(r.getAs(col));
                    continue;
                }
                float[] x = SEQS.get(id);
                float[] want = m.encode(Tensors.of(x, 1, x.length / E, E)).data();
                List<Float> got = r.getList(r.fieldIndex(col));
                float[] g = new float[got.size()];
                for (int k = 0; k < g.length; k++) g[k] = got.get(k);
                assertArrayEquals(want, g, 1e-5f, "row " + id);
            }
        }
    }

    @Test
    void eachRowIsTheModelsOutputForItsSequence() {
        List<Row> rows = new TensorEncoder()
                .setModelPath(model.toString())
                .setInputCol("x")
                .setOutputCol("y")
                .setBatchSize(4)
                .setDevice("cpu")
                .setThreads(1)
                .transform(sequences(3))
                .orderBy("id")
                .collectAsList();
        assertAlone(rows, "y");
    }

    @Test
    void doublesAndVectorsAreReadAsFloats() {
        Dataset<Row> doubles = sequences(2)
                .withColumn("x", org.apache.spark.sql.functions.col("x").cast("array<double>"));
        TensorEncoder t = new TensorEncoder().setModelPath(model.toString()).setInputCol("x");
        assertAlone(t.transform(doubles).orderBy("id").collectAsList(), "output");

        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < SEQS.size(); i++) {
            float[] x = SEQS.get(i);
            double[] d = new double[x.length];
            for (int k = 0; k < d.length; k++) d[k] = x[k];
            rows.add(RowFactory.create(i, i == 7 ? null : Vectors.dense(d)));
        }
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType)
                .add("x", org.apache.spark.ml.linalg.SQLDataTypes.VectorType());
        assertAlone(
                t.transform(spark.createDataFrame(rows, schema)).orderBy("id").collectAsList(), "output");
    }

    @Test
    void aConfigFileInsteadOfTheMetadata() throws Exception {
        Path bare = dir.resolve("bare.safetensors");
        Tensors.writeSafetensors(bare, Tensors.readSafetensors(model), Map.of());
        Path config = Files.writeString(
                dir.resolve("config.json"),
                "{\"module\":\"TransformerEncoderLayer\",\"d_model\":" + E + ",\"nhead\":2,\"dim_feedforward\":16}");
        TensorEncoder t = new TensorEncoder().setModelPath(bare.toString()).setInputCol("x");
        Exception noConfig =
                assertThrows(Exception.class, () -> t.transform(sequences(1)).count());
        assertTrue(LibraryCheck.rootMessage(noConfig).contains("config"), LibraryCheck.rootMessage(noConfig));
        assertAlone(
                t.setConfigPath(config.toString())
                        .transform(sequences(1))
                        .orderBy("id")
                        .collectAsList(),
                "output");
    }

    @Test
    void savedAndLoaded() throws Exception {
        TensorEncoder t = new TensorEncoder()
                .setModelPath(model.toString())
                .setInputCol("x")
                .setBatchSize(5)
                .setThreads(1);
        String path = dir.resolve("encoder").toString();
        t.write().overwrite().save(path);
        TensorEncoder back = TensorEncoder.load(path);
        assertEquals(t.settings(), back.settings());
        assertEquals("x", back.getInputCol());
        assertNull(back.getConfigPath());
    }

    @Test
    void aRowOfTheWrongLengthIsNamedWithItsColumn() {
        List<Row> rows = List.of(RowFactory.create(0, new Float[] {1f, 2f, 3f}));
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType)
                .add("x", DataTypes.createArrayType(DataTypes.FloatType));
        TensorEncoder t = new TensorEncoder().setModelPath(model.toString()).setInputCol("x");
        Exception e = assertThrows(Exception.class, () -> t.transform(spark.createDataFrame(rows, schema))
                .count());
        assertEquals(
                "column \"x\": a row holds 3 numbers, not a positive multiple of the model width 8 (one sequence (L, 8)"
                        + " per row)",
                LibraryCheck.rootMessage(e));
        AttnException s = assertThrows(
                AttnException.class, () -> t.setInputCol("id").transform(spark.createDataFrame(rows, schema)));
        assertEquals(
                "TensorEncoder: input column \"id\" is int, expected array<float>, array<double> or vector",
                s.getMessage());
    }
}
