package io.attn.spark;

import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Tensors;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * An attn tensor model ({@code TransformerEncoderLayer}, {@code TransformerEncoder}, {@code MultiheadAttention}
 * self-attention or {@code SelfAttention}, exported from PyTorch as {@code attn run} loads it) over an array column,
 * as a Spark ML {@link org.apache.spark.ml.Transformer}. A row holds one sequence {@code (L, E)} laid out row-major,
 * {@code L * E} numbers ({@code array<float>}, {@code array<double>} or an {@code ml.linalg.Vector}), E the model's
 * width; the output column holds the model's output for it, {@code array<float>} of the same length. A null input
 * gives a null output.
 *
 * <p>Each task reads its arrays as {@code float[]} (no boxing), groups a chunk's sequences by length, and runs each
 * group in batches {@code (B, L, E)} of at most {@code batchSize} sequences (no padding), rows back in input order. The
 * model is the executor's one copy ({@link ExecutorModels}).
 *
 * <p>Params (besides {@link AttnTransformer}'s): {@code configPath} (the JSON config when the safetensors metadata has
 * none), {@code batchSize} (sequences per forward pass, 64). Configure on the driver; not meant to be changed while a
 * job runs.
 */
public final class TensorEncoder extends AttnTransformer<TensorEncoder> {
    /** A task hands the model at most this many floats per chunk. */
    static final long CHUNK_FLOATS = 1 << 22;

    private final Param<String> configPath;
    private final IntParam batchSize;

    public TensorEncoder() {
        this(Identifiable.randomUID("attnTensorEncoder"));
    }

    public TensorEncoder(String uid) {
        super(uid, "input", "output");
        configPath = new Param<>(this, "configPath", "the model's JSON config (unset: the safetensors metadata)");
        batchSize = new IntParam(this, "batchSize", "the most sequences in one forward pass", ParamValidators.gt(0));
        setDefault(batchSize, 64);
    }

    public static MLReader<TensorEncoder> read() {
        return new DefaultParamsReader<>();
    }

    public static TensorEncoder load(String path) {
        return read().load(path);
    }

    public Param<String> configPath() {
        return configPath;
    }

    public IntParam batchSize() {
        return batchSize;
    }

    /** The config path, or null for the safetensors metadata. */
    public String getConfigPath() {
        return isDefined(configPath) ? getOrDefault(configPath) : null;
    }

    public int getBatchSize() {
        return (Integer) getOrDefault(batchSize);
    }

    public TensorEncoder setConfigPath(String v) {
        return with(configPath, v);
    }

    public TensorEncoder setBatchSize(int v) {
        return with(batchSize, v);
    }

    /** The settings the executors load the model with (checked here, on the driver). */
    public TensorSettings settings() {
        return new TensorSettings(getModelPath(), getConfigPath(), getBatchSize(), engineSettings());
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return withOutput(
                schema,
                DataTypes.createArrayType(DataTypes.FloatType, false),
                "array<float>, array<double> or vector",
                DataTypes.createArrayType(DataTypes.FloatType, false),
                DataTypes.createArrayType(DataTypes.FloatType, true),
                DataTypes.createArrayType(DataTypes.DoubleType, false),
                DataTypes.createArrayType(DataTypes.DoubleType, true),
                org.apache.spark.ml.linalg.SQLDataTypes.VectorType());
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        StructType out = transformSchema(dataset.schema());
        TensorSettings s = settings();
        ModelLocation.resolve(s.modelPath());
        if (s.configPath() != null) ModelLocation.resolve(s.configPath());
        Dataset<Row> df = dataset.toDF();
        Column in = df.col(getInputCol());
        Column floats = df.schema().apply(getInputCol()).dataType() instanceof ArrayType
                ? in.cast(DataTypes.createArrayType(DataTypes.FloatType, true))
                : functions.when(in.isNotNull(), org.apache.spark.ml.functions.vector_to_array(in, "float32"));
        Column[] all = new Column[df.columns().length];
        for (int i = 0; i < all.length; i++) all[i] = df.col(df.columns()[i]);
        Dataset<Tuple2<Row, float[]>> typed = df.select(functions.struct(all).as("_1"), floats.as("_2"))
                .as(Encoders.tuple(
                        Encoders.row(df.schema()), df.sparkSession().implicits().newFloatArrayEncoder()));
        return typed.mapPartitions(new EncodeRows(s, getInputCol()), Encoders.row(out));
    }

    /** A partition's rows with their model outputs; what the tasks run. Holds no transformer, only the settings. */
    private record EncodeRows(TensorSettings s, String column)
            implements MapPartitionsFunction<Tuple2<Row, float[]>, Row> {
        @Override
        public Iterator<Row> call(Iterator<Tuple2<Row, float[]>> rows) {
            return new ChunkedMap<Tuple2<Row, float[]>, float[], float[], Row>(
                    rows,
                    Tuple2::_2,
                    x -> x.length,
                    Math.max(1024, s.batchSize()),
                    CHUNK_FLOATS,
                    this::encode,
                    (r, y) -> Rows.append(r._1(), y));
        }

        /** The model's output for each sequence: grouped by length, in batches of at most batchSize. */
        private List<float[]> encode(List<float[]> xs) {
            AttnModel m = ExecutorModels.tensorModel(s);
            int e = m.width();
            Map<Integer, List<Integer>> byLength = new LinkedHashMap<>();
            for (int i = 0; i < xs.size(); i++) {
                int n = xs.get(i).length;
                if (n == 0 || n % e != 0)
                    throw AttnException.shape("column \"" + column + "\": a row holds " + n
                            + " numbers, not a positive multiple of the model width " + e + " (one sequence (L, "
                            + e + ") per row)");
                byLength.computeIfAbsent(n / e, k -> new ArrayList<>()).add(i);
            }
            float[][] out = new float[xs.size()][];
            byLength.forEach((len, rows) -> {
                for (int from = 0; from < rows.size(); from += s.batchSize()) {
                    List<Integer> batch = rows.subList(from, Math.min(rows.size(), from + s.batchSize()));
                    int per = len * e;
                    float[] x = new float[batch.size() * per];
                    for (int b = 0; b < batch.size(); b++) System.arraycopy(xs.get(batch.get(b)), 0, x, b * per, per);
                    float[] y = m.encode(Tensors.of(x, batch.size(), len, e)).data();
                    for (int b = 0; b < batch.size(); b++)
                        out[batch.get(b)] = Arrays.copyOfRange(y, b * per, (b + 1) * per);
                }
            });
            return Arrays.asList(out);
        }
    }
}
