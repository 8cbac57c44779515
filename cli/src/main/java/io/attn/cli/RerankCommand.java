package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.text.EmbedderOptions;
import io.attn.text.Reranker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn rerank}: a cross-encoder ({@link Reranker}) scores each passage against the query; prints them ranked
 * (index, score, text), or writes JSON lines {@code {"index", "score", "text"}} best first.
 */
@Command(
        name = "rerank",
        description = "Rank passages for a query with a cross-encoder (a *ForSequenceClassification model folder).",
        sortOptions = false)
final class RerankCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "DIR", description = "Cross-encoder model folder.")
    Path model;

    @Option(names = "--query", required = true, paramLabel = "TEXT", description = "The query.")
    String query;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            description = "Passages: .txt (one per line, UTF-8) or .jsonl (--text-field per line).")
    Path input;

    @Option(names = "--text", paramLabel = "TEXT", description = "A passage (repeatable).")
    List<String> texts;

    @Option(names = "--text-field", description = "The .jsonl field holding the passage (default: ${DEFAULT-VALUE}).")
    String textField = "text";

    @Option(names = "--top-n", paramLabel = "N", description = "Print the best N only (default: all).")
    int topN;

    @Option(names = "--raw-scores", description = "The model's logits, without its activation (sigmoid by default).")
    boolean raw;

    @Option(
            names = "--output",
            paramLabel = "FILE.jsonl",
            description = "Write {\"index\", \"score\", \"text\"} per line, best first, atomically.")
    Path output;

    @Option(names = "--max-length", paramLabel = "N", description = "Cut pairs at N tokens (default: the model's).")
    int maxLength;

    @Option(
            names = "--batch-tokens",
            paramLabel = "N",
            description = "Most tokens per forward pass (default: 4096, or the max length when that is longer).")
    int batchTokens = 0; // EmbedderOptions' default

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        boolean hasTexts = texts != null && !texts.isEmpty();
        if (hasTexts == (input != null))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "give either --input FILE or --text TEXT (repeatable)");
        if (topN < 0)
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--top-n must be >= 0, got " + topN);
        if (output != null && !output.toString().endsWith(".jsonl"))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--output must be a .jsonl file, got " + output);
        var cmd = new picocli.CommandLine(this);
        EmbedderOptions o = EmbedderOptions.defaults()
                .withMaxLength(OptionValues.atLeast(cmd, "--max-length", maxLength, 0, "the model's"))
                .withMaxBatchTokens(OptionValues.atLeast(cmd, "--batch-tokens", batchTokens, 0, "the default"));
        OptionValues.outputTarget(cmd, "--output", output, input);
        List<String> passages = hasTexts ? texts : readAll(input, textField);
        if (passages.isEmpty()) throw AttnException.badInput(input + ": no passages");
        if (topN > passages.size())
            throw AttnException.badInput("--top-n " + topN + " is more than the " + passages.size() + " passages"
                    + (input != null ? " of " + input : ""));
        try (Engine engine = Engine.open(device.engineOptions());
                Reranker r = Reranker.load(engine, model, o)) {
            System.err.println("attn: " + r.description() + (raw ? " (--raw-scores: printing the logits)" : "") + "; "
                    + engine.description());
            List<Reranker.Ranked> ranked = r.rank(query, passages, topN, raw);
            List<String> lines = new ArrayList<>();
            for (Reranker.Ranked k : ranked) {
                if (output == null)
                    System.out.printf(
                            Locale.ROOT,
                            "%5d  %12.6f  %s%n",
                            k.index(),
                            k.score(),
                            ScoreOutput.shown(passages.get(k.index())));
                else
                    lines.add("{\"index\":" + k.index() + ",\"score\":" + ScoreOutput.json(k.score()) + ",\"text\":"
                            + ScoreOutput.json(passages.get(k.index())) + "}");
            }
            if (output != null) {
                ScoreOutput.write(output, lines);
                System.err.println("attn: wrote " + lines.size() + " ranked passages to " + output);
            }
        }
        return 0;
    }

    static List<String> readAll(Path file, String field) {
        List<String> all = new ArrayList<>();
        try (TextLines in = TextLines.open(file, field)) {
            for (List<String> chunk; !(chunk = in.next()).isEmpty(); ) all.addAll(chunk);
        }
        return all;
    }
}
