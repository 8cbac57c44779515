package io.attn.cli;

import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The text-model overrides shared by {@code embed}, {@code serve} and {@code bench embed}. */
final class EmbedOptions {
    @Option(names = "--pooling", paramLabel = "mean|cls|max", description = "Override the model's pooling.")
    String pooling;

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
        EmbedderOptions o = EmbedderOptions.defaults()
                .withMaxLength(maxLength)
                .withTokenizer(tokenizer)
                .withNormalize(normalize);
        return pooling == null ? o : o.withPooling(Pooling.parse(pooling));
    }
}
