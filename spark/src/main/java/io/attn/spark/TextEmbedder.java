package io.attn.spark;

import io.attn.text.EmbedderOptions;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Sentence embeddings of a string column, as a Spark ML {@link org.apache.spark.ml.Transformer}: each partition's texts
 * go through the executor's one copy of the model ({@link ExecutorModels}) in large batches, and every row comes out
 * in its order with its vector added; a null text gets a null vector.
 *
 * <pre>{@code
 * TextEmbedder embed = new TextEmbedder().setModelPath("/models/all-MiniLM-L6-v2").setInputCol("text")
 *         .setOutputCol("embedding");
 * Dataset<Row> out = embed.transform(docs); // or a stage of a Pipeline
 * }</pre>
 *
 * <p>Params (besides {@link AttnTransformer}'s): {@code batchSize} (texts per forward pass, 256), {@code batchTokens}
 * (tokens per forward pass, 0: 4096, or the max length when that is longer; with the batch size this bounds the
 * working memory of a task), {@code pooling}
 * ({@code mean}, {@code cls}, {@code max}; unset: the model's), {@code normalize} (unset: the model's), {@code
 * maxLength} (tokens per text; 0: the model's), {@code promptName} (the model's prompt before every text; unset: its
 * default, or the task's), {@code task} (a task LoRA model's adapter, jina-embeddings-v3's {@code retrieval.passage}
 * for instance, merged when the model loads, its prompt first; unset: none), {@code outputType} ({@code vector}: an {@code ml.linalg.Vector} column,
 * the default; {@code array}: {@code array<float>}). The vectors are those of {@code attn embed} and {@link
 * io.attn.text.Embedder#embed} on the same texts, bitwise, whatever the partitioning.
 *
 * <p>{@code transform} checks the columns and that the model path exists (on the driver) before any task runs, and
 * throws {@link io.attn.AttnException} with one line naming the column or path. Configure on the driver; not meant
 * to be changed while a job runs.
 */
public final class TextEmbedder extends AttnTransformer<TextEmbedder> {
    /** A task hands the model at most this many characters of text per call. */
    static final int CHUNK_CHARS = 1 << 20;
    /** A task hands the model at least this many texts per call (more when the batch size is larger). */
    static final int CHUNK_TEXTS = 1024;

    private final IntParam batchSize, batchTokens, maxLength;
    private final Param<String> pooling, outputType, promptName, task;
    private final BooleanParam normalize;

    public TextEmbedder() {
        this(Identifiable.randomUID("attnTextEmbedder"));
    }

    public TextEmbedder(String uid) {
        super(uid, "text", "embedding");
        batchSize = new IntParam(this, "batchSize", "the most texts in one forward pass", ParamValidators.gt(0));
        batchTokens = new IntParam(
                this,
                "batchTokens",
                "the most tokens in one forward pass (bounds a task's working memory); 0: 4096, or the max length"
                        + " when that is longer",
                ParamValidators.gtEq(0));
        maxLength = new IntParam(
                this,
                "maxLength",
                "texts are cut at this many tokens, special tokens included (0: the model's)",
                ParamValidators.gtEq(0));
        pooling = new Param<>(
                this,
                "pooling",
                "mean, cls or max (unset: the model's)",
                ParamValidators.inArray(List.of("mean", "cls", "max")));
        normalize = new BooleanParam(this, "normalize", "L2-normalize the vectors (unset: the model's)");
        promptName = new Param<>(
                this,
                "promptName",
                "the model's prompt put before every text (config_sentence_transformers.json; unset: its default,"
                        + " or the task's)");
        task = new Param<>(
                this,
                "task",
                "a task LoRA model's (jina-embeddings-v3's) task adapter merged when the model loads, its prompt"
                        + " first (unset: none, the base weights)");
        outputType = new Param<>(
                this,
                "outputType",
                "vector (ml.linalg.Vector) or array (array<float>)",
                ParamValidators.inArray(List.of("vector", "array")));
        setDefault(batchSize, EmbedderOptions.DEFAULT_BATCH_SIZE);
        setDefault(batchTokens, 0); // EmbedderOptions' default: 4096, or the max length when longer
        setDefault(maxLength, 0);
        setDefault(outputType, "vector");
    }

    public static MLReader<TextEmbedder> read() {
        return new DefaultParamsReader<>();
    }

    public static TextEmbedder load(String path) {
        return read().load(path);
    }

    public IntParam batchSize() {
        return batchSize;
    }

    public IntParam batchTokens() {
        return batchTokens;
    }

    public IntParam maxLength() {
        return maxLength;
    }

    public Param<String> pooling() {
        return pooling;
    }

    public BooleanParam normalize() {
        return normalize;
    }

    public Param<String> outputType() {
        return outputType;
    }

    public Param<String> promptName() {
        return promptName;
    }

    public Param<String> task() {
        return task;
    }

    /** The model's prompt before every text, or null for its default (or the task's). */
    public String getPromptName() {
        return isDefined(promptName) ? getOrDefault(promptName) : null;
    }

    /** The task adapter merged when the model loads, or null for none. */
    public String getTask() {
        return isDefined(task) ? getOrDefault(task) : null;
    }

    public TextEmbedder setPromptName(String v) {
        return with(promptName, v);
    }

    public TextEmbedder setTask(String v) {
        return with(task, v);
    }

    public int getBatchSize() {
        return (Integer) getOrDefault(batchSize);
    }

    public int getBatchTokens() {
        return (Integer) getOrDefault(batchTokens);
    }

    public int getMaxLength() {
        return (Integer) getOrDefault(maxLength);
    }

    /** {@code mean}, {@code cls}, {@code max}, or null for the model's. */
    public String getPooling() {
        return isDefined(pooling) ? getOrDefault(pooling) : null;
    }

    /** Whether vectors are normalized, or null for the model's. */
    public Boolean getNormalize() {
        return isDefined(normalize) ? (Boolean) getOrDefault(normalize) : null;
    }

    public String getOutputType() {
        return getOrDefault(outputType);
    }

    public TextEmbedder setBatchSize(int v) {
        return with(batchSize, v);
    }

    public TextEmbedder setBatchTokens(int v) {
        return with(batchTokens, v);
    }

    public TextEmbedder setMaxLength(int v) {
        return with(maxLength, v);
    }

    public TextEmbedder setPooling(String v) {
        return with(pooling, v);
    }

    public TextEmbedder setNormalize(boolean v) {
        return with(normalize, v);
    }

    public TextEmbedder setOutputType(String v) {
        return with(outputType, v);
    }

    /** The settings the executors load the model with (checked here, on the driver). */
    public EmbedSettings settings() {
        return new EmbedSettings(
                getModelPath(),
                getPooling(),
                getNormalize(),
                getMaxLength(),
                getBatchSize(),
                getBatchTokens(),
                getPromptName(),
                getTask(),
                engineSettings());
    }

    /**
     * A task the model at {@code model} (as the driver sees it) has, or BAD_INPUT naming the tasks it has, before any
     * task runs: a folder's {@code config.json} lists them ({@code lora_adaptations}); a single file holds none.
     */
    static void checkTask(java.nio.file.Path model, String task) {
        java.nio.file.Path config = model.resolve("config.json");
        if (java.nio.file.Files.isDirectory(model) && !java.nio.file.Files.isRegularFile(config))
            return; // the transformer lies in a module folder (modules.json): the executors' loading checks the task
        java.util.List<String> tasks = java.nio.file.Files.isRegularFile(config)
                ? io.attn.engine.TaskAdapters.tasks(io.attn.io.Json.readObject(config), config.toString())
                : java.util.List.of();
        if (!tasks.contains(task))
            throw io.attn.AttnException.badInput("model " + model + ": task \"" + task + "\" is not one of its task"
                    + " adapters " + (tasks.isEmpty() ? "(it has none: no lora_adaptations in a config.json)" : tasks));
    }

    @Override
    public StructType transformSchema(StructType schema) {
        DataType out = getOutputType().equals("vector")
                ? SQLDataTypes.VectorType()
                : DataTypes.createArrayType(DataTypes.FloatType, false);
        return withOutput(schema, out, "string", DataTypes.StringType);
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        StructType out = transformSchema(dataset.schema());
        EmbedSettings s = settings();
        java.nio.file.Path model = ModelLocation.resolve(s.modelPath());
        if (s.task() != null) checkTask(model, s.task());
        Dataset<Row> df = dataset.toDF();
        int col = df.schema().fieldIndex(getInputCol());
        return df.mapPartitions(new EmbedRows(s, col, getOutputType().equals("vector")), Encoders.row(out));
    }

    /** A partition's rows with their vectors; what the tasks run. Holds no transformer, only the settings. */
    private record EmbedRows(EmbedSettings s, int col, boolean vector) implements MapPartitionsFunction<Row, Row> {
        @Override
        public Iterator<Row> call(Iterator<Row> rows) {
            return new ChunkedMap<Row, String, float[], Row>(
                    rows,
                    r -> r.isNullAt(col) ? null : r.getString(col),
                    String::length,
                    Math.max(CHUNK_TEXTS, s.batchSize()),
                    CHUNK_CHARS,
                    texts -> Arrays.asList(ExecutorModels.embedder(s).embed(texts)),
                    (r, v) -> Rows.append(r, v == null ? null : vector ? Vectors.dense(widen(v)) : v));
        }

        private static double[] widen(float[] v) {
            double[] d = new double[v.length];
            for (int i = 0; i < v.length; i++) d[i] = v[i];
            return d;
        }
    }
}
