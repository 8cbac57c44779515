package io.attn.cli;

import io.attn.text.EmbedderOptions;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The text-model overrides shared by {@code embed}, {@code serve} and {@code bench embed}. */
final class EmbedOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(
            names = "--pooling",
            paramLabel = "MODE",
            description =
                    "Override the model's pooling: mean, cls, max, mean_sqrt_len_tokens, weightedmean, lasttoken.")
    String pooling;

    @Option(
            names = "--prompt-name",
            paramLabel = "NAME",
            description = "Put the model's prompt NAME before every text (config_sentence_transformers.json's prompts,"
                    + " e.g. query; default: the model's default_prompt_name, if any).")
    String promptName;

    @Option(
            names = "--prompt",
            paramLabel = "TEXT",
            description = "Put TEXT before every text instead of a named prompt (\"\" for none).")
    String prompt;

    @Option(
            names = "--task",
            paramLabel = "NAME",
            description = "Merge the model's task adapter NAME into its weights when it loads (a task LoRA model such"
                    + " as jina-embeddings-v3: retrieval.query, retrieval.passage, separation, classification,"
                    + " text-matching; default: none, the base weights); the model's prompt of that name then goes"
                    + " before every text unless --prompt-name or --prompt says otherwise.")
    String task;

    @Option(
            names = "--normalize",
            negatable = true,
            description = "L2-normalize the vectors (default: as the model says, i.e. when it has a Normalize module).")
    Boolean normalize;

    @Option(
            names = "--max-length",
            paramLabel = "N",
            description = "Truncate texts at N tokens (default: the model's).")
    int maxLength;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "tokenizer.json to use instead of the model's.")
    Path tokenizer;

    EmbedderOptions options() {
        // the command this mixes into (bench serve builds one of its own, all defaults)
        var cmd = command != null ? command.commandLine() : new picocli.CommandLine(this);
        EmbedderOptions o = EmbedderOptions.defaults()
                .withMaxLength(OptionValues.atLeast(cmd, "--max-length", maxLength, 0, "the model's"))
                .withTokenizer(tokenizer)
                .withNormalize(normalize)
                .withTask(task);
        if (promptName != null && prompt != null)
            throw OptionValues.usage(cmd, "give --prompt-name or --prompt, not both");
        if (promptName != null) o = o.withPromptName(promptName);
        if (prompt != null) o = o.withPrompt(prompt);
        return pooling == null ? o : o.withPooling(OptionValues.pooling(cmd, "--pooling", pooling));
    }
}
