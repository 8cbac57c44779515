package io.attn.text;

import io.attn.AttnException;
import io.attn.engine.TaskAdapters;
import java.nio.file.Path;

/**
 * How an {@link Embedder} is loaded: overrides of the model's own settings (null or 0 keep the model's) and the
 * batching limits.
 *
 * @param pooling null: the model's (sentence-transformers' Pooling module; mean without one)
 * @param normalize null: the model's (true when it lists a Normalize module)
 * @param maxLength 0: the model's (sentence-transformers' max_seq_length, else tokenizer.json's truncation, else
 *     max_position_embeddings); at most max_position_embeddings
 * @param maxBatchSize the most texts in one forward pass
 * @param maxBatchTokens the most tokens in one forward pass, padding included (batch size times its longest text):
 *     with the batch size, this bounds the working memory whatever the number or length of the texts; 0 (the
 *     default): {@link #DEFAULT_BATCH_TOKENS}, or the max length where that is longer (ModernBERT's 8192), so that
 *     one longest text always fits a batch
 * @param tokenizer a {@code tokenizer.json} to use instead of the model's (null: the model's)
 * @param promptName the model's prompt put before every text by default (null: the model's {@code
 *     default_prompt_name}, if any); a name the model does not have is refused when the embedder loads
 * @param prompt a text put before every text by default instead of a named prompt (null: none), as
 *     sentence-transformers' {@code encode(prompt=...)}
 * @param task the model's task adapter to merge into its weights when it loads (null: none; the base weights), one of
 *     the {@code lora_adaptations} of a task LoRA model such as jina-embeddings-v3; it also picks the model's prompt
 *     of the same name, when it has one and neither {@code promptName} nor {@code prompt} is given, as Jina's API
 *     applies a task's instruction with its adapter
 * @param taskAdapters how the task's adapter reaches the model ({@link TaskAdapters.Mode}): merged into a copy of the
 *     weights (null, the default for one model: no cost per call) or run beside the weights as read ({@code SHARE});
 *     the models of several tasks share their weights when they are read together ({@link TextModel#read(Path, Path,
 *     java.util.List, TaskAdapters.Mode)}, then {@link Embedder#load(io.attn.engine.Engine, TextModel,
 *     EmbedderOptions)} for each), as {@code attn serve} reads one folder served for several tasks
 *     <p>Immutable and thread-safe.
 */
public record EmbedderOptions(
        Pooling pooling,
        Boolean normalize,
        int maxLength,
        int maxBatchSize,
        int maxBatchTokens,
        Path tokenizer,
        String promptName,
        String prompt,
        String task,
        TaskAdapters.Mode taskAdapters) {
    /** Texts per forward pass by default. */
    public static final int DEFAULT_BATCH_SIZE = 256;
    /**
     * Tokens (padding included) per forward pass by default ({@code maxBatchTokens} 0), raised to the max length for
     * a model whose max length is longer.
     */
    public static final int DEFAULT_BATCH_TOKENS = 4096;

    public EmbedderOptions {
        if (maxLength < 0) throw AttnException.badInput("max length must be >= 0 (0 = the model's), got " + maxLength);
        if (maxBatchSize <= 0) throw AttnException.badInput("batch size must be positive, got " + maxBatchSize);
        if (maxBatchTokens < 0)
            throw AttnException.badInput(
                    "batch token budget must be positive (or 0: the default), got " + maxBatchTokens);
        if (promptName != null && prompt != null)
            throw AttnException.badInput("give a prompt name or a prompt text, not both");
    }

    /** The options without a task adapter mode (merged, the default). */
    public EmbedderOptions(
            Pooling pooling,
            Boolean normalize,
            int maxLength,
            int maxBatchSize,
            int maxBatchTokens,
            Path tokenizer,
            String promptName,
            String prompt,
            String task) {
        this(pooling, normalize, maxLength, maxBatchSize, maxBatchTokens, tokenizer, promptName, prompt, task, null);
    }

    /**
     * How the task adapter reaches the model ({@code --task-adapters merge|share}; null: merged, or shared where a
     * server reads one folder for several tasks).
     */
    public EmbedderOptions withTaskAdapters(TaskAdapters.Mode mode) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, maxBatchSize, maxBatchTokens, tokenizer, promptName, prompt, task, mode);
    }

    /** The model's own settings, the default batching. */
    public static EmbedderOptions defaults() {
        return new EmbedderOptions(null, null, 0, DEFAULT_BATCH_SIZE, 0, null, null, null, null, null);
    }

    /**
     * The batch token budget for texts of up to {@code maxLength} tokens: {@code maxBatchTokens}, or by default (0)
     * {@link #DEFAULT_BATCH_TOKENS} raised to {@code maxLength}; a budget given below {@code maxLength} is refused
     * (one longest text would not fit a batch).
     */
    public int batchTokensFor(int maxLength) {
        if (maxBatchTokens == 0) return Math.max(DEFAULT_BATCH_TOKENS, maxLength);
        if (maxLength > maxBatchTokens)
            throw AttnException.badInput("batch token budget " + maxBatchTokens + " is below the max length "
                    + maxLength + ": one long text would not fit a batch");
        return maxBatchTokens;
    }

    public EmbedderOptions withPooling(Pooling p) {
        return new EmbedderOptions(
                p,
                normalize,
                maxLength,
                maxBatchSize,
                maxBatchTokens,
                tokenizer,
                promptName,
                prompt,
                task,
                taskAdapters);
    }

    public EmbedderOptions withNormalize(Boolean n) {
        return new EmbedderOptions(
                pooling, n, maxLength, maxBatchSize, maxBatchTokens, tokenizer, promptName, prompt, task, taskAdapters);
    }

    public EmbedderOptions withMaxLength(int m) {
        return new EmbedderOptions(
                pooling, normalize, m, maxBatchSize, maxBatchTokens, tokenizer, promptName, prompt, task, taskAdapters);
    }

    public EmbedderOptions withMaxBatchSize(int b) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, b, maxBatchTokens, tokenizer, promptName, prompt, task, taskAdapters);
    }

    public EmbedderOptions withMaxBatchTokens(int t) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, maxBatchSize, t, tokenizer, promptName, prompt, task, taskAdapters);
    }

    public EmbedderOptions withTokenizer(Path t) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, maxBatchSize, maxBatchTokens, t, promptName, prompt, task, taskAdapters);
    }

    /** A named prompt of the model before every text by default ({@code --prompt-name}). */
    public EmbedderOptions withPromptName(String name) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, maxBatchSize, maxBatchTokens, tokenizer, name, null, task, taskAdapters);
    }

    /** The model's task adapter {@code task} merged when it loads ({@code --task}; null: none). */
    public EmbedderOptions withTask(String task) {
        return new EmbedderOptions(
                pooling,
                normalize,
                maxLength,
                maxBatchSize,
                maxBatchTokens,
                tokenizer,
                promptName,
                prompt,
                task,
                taskAdapters);
    }

    /** A text before every text by default ({@code --prompt}); "" for none, whatever the model's default. */
    public EmbedderOptions withPrompt(String text) {
        return new EmbedderOptions(
                pooling, normalize, maxLength, maxBatchSize, maxBatchTokens, tokenizer, null, text, task, taskAdapters);
    }
}
