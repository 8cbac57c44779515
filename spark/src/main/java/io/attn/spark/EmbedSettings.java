package io.attn.spark;

import io.attn.AttnException;
import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import java.io.Serializable;

/**
 * What a task needs to get its {@link io.attn.text.Embedder} from the executor's {@link ExecutorModels}: the model, the
 * overrides of its settings and where it runs. Two tasks with equal settings share one loaded model. Shipped to the
 * executors inside the tasks' closures.
 *
 * @param modelPath a Hugging Face folder or {@code .onnx} file on the node's file system, or the name of one shipped
 *     with {@code --files}/{@code --archives} (see {@link ModelLocation})
 * @param pooling {@code mean}, {@code cls} or {@code max}; null: the model's
 * @param normalize null: the model's
 * @param maxLength tokens per text, special tokens included; 0: the model's
 * @param batchSize the most texts in one forward pass
 * @param batchTokens the most tokens in one forward pass (bounds the working memory); 0: 4096, or the max length when
 *     that is longer
 * @param promptName the model's prompt put before every text (null: the model's default prompt, or the task's)
 * @param task the model's task adapter merged when it loads (jina-embeddings-v3's {@code retrieval.passage}, ...; null:
 *     none), its prompt of the same name first unless {@code promptName} says otherwise
 * @param engine the device and CPU threads
 *     <p>Immutable and thread-safe.
 */
public record EmbedSettings(
        String modelPath,
        String pooling,
        Boolean normalize,
        int maxLength,
        int batchSize,
        int batchTokens,
        String promptName,
        String task,
        EngineSettings engine)
        implements Serializable {
    public EmbedSettings {
        if (modelPath == null || modelPath.isBlank()) throw AttnException.badInput("modelPath is not set");
        if (pooling != null) pooling = Pooling.parse(pooling).label();
        if (engine == null) throw AttnException.badInput("engine settings are required");
        options(pooling, normalize, maxLength, batchSize, batchTokens, promptName, task); // the embedder's checks
    }

    /** The model with its own settings, the default batching, the {@code auto} device and the executor's cores. */
    public static EmbedSettings of(String modelPath) {
        return new EmbedSettings(
                modelPath,
                null,
                null,
                0,
                EmbedderOptions.DEFAULT_BATCH_SIZE,
                0, // EmbedderOptions' default: 4096, or the max length when longer
                null,
                null,
                EngineSettings.defaults());
    }

    /** The options the {@link io.attn.text.Embedder} is loaded with. */
    public EmbedderOptions options() {
        return options(pooling, normalize, maxLength, batchSize, batchTokens, promptName, task);
    }

    private static EmbedderOptions options(
            String pooling,
            Boolean normalize,
            int maxLength,
            int batchSize,
            int batchTokens,
            String promptName,
            String task) {
        EmbedderOptions o = EmbedderOptions.defaults().withTask(task);
        if (promptName != null) o = o.withPromptName(promptName);
        return o.withPooling(pooling == null ? null : Pooling.parse(pooling))
                .withNormalize(normalize)
                .withMaxLength(maxLength)
                .withMaxBatchSize(batchSize)
                .withMaxBatchTokens(batchTokens);
    }
}
