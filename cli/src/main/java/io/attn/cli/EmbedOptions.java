package io.attn.cli;

import io.attn.text.EmbedderOptions;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The text-model overrides shared by {@code embed} and {@code serve} (and, all defaults, {@code bench serve}). */
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
            paramLabel = "[NAME=]TASK",
            description = "Merge the model's task adapter TASK into its weights when it loads (a task LoRA model such"
                    + " as jina-embeddings-v3: retrieval.query, retrieval.passage, separation, classification,"
                    + " text-matching; default: none, the base weights); the model's prompt of that name then goes"
                    + " before every text unless --prompt-name or --prompt says otherwise. attn serve: NAME=TASK for"
                    + " the model served as NAME (repeat for several), NAME=T1,T2 for several tasks under one name (T2"
                    + " served as its own copy NAME/T2; a request's task picks it), TASK alone for every model.")
    List<String> task;

    @Option(
            names = "--task-adapters",
            paramLabel = "MODE",
            description =
                    "How a task adapter reaches the model: merge (into a copy of the weights: no cost per call) or"
                            + " share (run beside the saved weights, which the models of every task then share: a copy of"
                            + " the model per task saved, a little time per call). Default: share where attn serve serves one"
                            + " folder for several tasks, else merge.")
    String taskAdapters;

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

    /**
     * The tasks given, by model name ({@code NAME=TASK}; the key null for a task alone): {@code named} false (every
     * command but serve) allows one task alone only.
     */
    java.util.Map<String, String> task(picocli.CommandLine cmd, boolean named) {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String t : task == null ? List.<String>of() : task) {
            int eq = t.indexOf('=');
            String name = eq > 0 ? t.substring(0, eq) : null, value = eq > 0 ? t.substring(eq + 1) : t;
            if (value.isBlank()) throw OptionValues.usage(cmd, "--task " + t + ": no task named");
            if (name != null && !named)
                throw OptionValues.usage(cmd, "--task " + t + ": NAME=TASK names a model of attn serve; give TASK");
            if (out.put(name, value) != null)
                throw OptionValues.usage(
                        cmd, "--task is given twice" + (name == null ? "" : " for model \"" + name + "\""));
        }
        return out;
    }

    EmbedderOptions options() {
        // the command this mixes into (bench serve builds one of its own, all defaults)
        var cmd = command != null ? command.commandLine() : new picocli.CommandLine(this);
        EmbedderOptions o = EmbedderOptions.defaults()
                .withMaxLength(OptionValues.atLeast(cmd, "--max-length", maxLength, 0, "the model's"))
                .withTokenizer(tokenizer)
                .withNormalize(normalize)
                .withTask(task(cmd, command != null && "serve".equals(command.name()))
                        .get(null));
        if (taskAdapters != null) o = o.withTaskAdapters(OptionValues.taskAdapters(cmd, taskAdapters));
        if (promptName != null && prompt != null)
            throw OptionValues.usage(cmd, "give --prompt-name or --prompt, not both");
        if (promptName != null) o = o.withPromptName(promptName);
        if (prompt != null) o = o.withPrompt(prompt);
        return pooling == null ? o : o.withPooling(OptionValues.pooling(cmd, "--pooling", pooling));
    }
}
