package io.attn.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;

/**
 * attn's SQL functions, registered on a session by one call:
 *
 * <pre>{@code
 * AttnFunctions.register(spark, "/models/all-MiniLM-L6-v2");
 * spark.sql("SELECT id, attn_embed(text) AS embedding FROM docs");
 * }</pre>
 *
 * <p>{@code attn_embed(text)} returns the text's sentence embedding as {@code array<float>} (null for a null text),
 * from the executor's one copy of the model ({@link ExecutorModels}), the vector {@link TextEmbedder} gives. Spark
 * calls a SQL function once per row, so each text is its own forward pass: for bulk embedding, {@link TextEmbedder}
 * (or {@link EmbedJob}) batches a partition's texts and is several times faster.
 *
 * <p>Stateless and thread-safe.
 */
public final class AttnFunctions {
    /** The SQL name of the embedding function. */
    public static final String EMBED = "attn_embed";

    private AttnFunctions() {}

    /** Registers {@code attn_embed} with the model's own settings, on the {@code auto} device. */
    public static void register(SparkSession spark, String modelPath) {
        register(spark, new TextEmbedder().setModelPath(modelPath));
    }

    /**
     * Registers {@code attn_embed} with the settings of {@code embedder} (model path, pooling, normalization, maximum
     * length, prompt name, task, device, threads; its columns and output type are not used). The model path (and a
     * task against the folder's config.json) is checked here, on the driver.
     */
    public static void register(SparkSession spark, TextEmbedder embedder) {
        EmbedSettings s = embedder.settings();
        java.nio.file.Path model = ModelLocation.resolve(s.modelPath());
        if (s.task() != null) TextEmbedder.checkTask(model, s.task());
        UDF1<String, float[]> embed =
                text -> text == null ? null : ExecutorModels.embedder(s).embed(text);
        spark.udf().register(EMBED, embed, DataTypes.createArrayType(DataTypes.FloatType, false));
    }
}
