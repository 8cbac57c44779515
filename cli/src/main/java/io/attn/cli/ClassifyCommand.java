package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.text.Classifier;
import io.attn.text.EmbedderOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn classify}: a text classifier ({@link Classifier}) labels each text; prints the best label and every
 * label's score, or writes JSON lines {@code {"index", "label", "score", "scores": {label: score}}}. Texts or sentence
 * pairs ({@code --text-pair}, or {@code --pair-field} of a .jsonl input), as TEI's {@code /predict} takes them.
 */
@Command(
        name = "classify",
        description = "Label texts with a sequence classifier (a *ForSequenceClassification model folder).",
        sortOptions = false)
final class ClassifyCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "DIR", description = "Classifier model folder.")
    Path model;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            description = "Texts: .txt (one per line, UTF-8) or .jsonl (--text-field per line).")
    Path input;

    @Option(names = "--text", paramLabel = "TEXT", description = "A text (repeatable).")
    List<String> texts;

    @Option(
            names = "--text-pair",
            paramLabel = "TEXT",
            description = "The second text of a sentence pair, one per --text, in order (repeatable): pairs are"
                    + " classified as the model was trained (token type ids where it has them).")
    List<String> textPairs;

    @Option(names = "--text-field", description = "The .jsonl field holding the text (default: ${DEFAULT-VALUE}).")
    String textField = "text";

    @Option(
            names = "--pair-field",
            paramLabel = "FIELD",
            description = "With a .jsonl --input: the field holding each line's second text (e.g. text_pair); every"
                    + " line then needs both fields.")
    String pairField;

    @Option(names = "--raw-scores", description = "The model's logits, without its activation (softmax by default).")
    boolean raw;

    @Option(
            names = "--output",
            paramLabel = "FILE.jsonl",
            description = "Write {\"index\", \"label\", \"score\", \"scores\"} per line, atomically.")
    Path output;

    @Option(names = "--max-length", paramLabel = "N", description = "Cut texts at N tokens (default: the model's).")
    int maxLength;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        boolean hasTexts = texts != null && !texts.isEmpty();
        if (hasTexts == (input != null))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "give either --input FILE or --text TEXT (repeatable)");
        if (output != null && !output.toString().endsWith(".jsonl"))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--output must be a .jsonl file, got " + output);
        boolean hasPairs = textPairs != null && !textPairs.isEmpty();
        if (hasPairs && !hasTexts)
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--text-pair pairs with --text; with --input use --pair-field");
        if (hasPairs && textPairs.size() != texts.size())
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this),
                    "--text-pair given " + textPairs.size() + " times for " + texts.size() + " --text");
        if (pairField != null && (input == null || !input.toString().endsWith(".jsonl")))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--pair-field needs a .jsonl --input");
        OptionValues.atLeast(new picocli.CommandLine(this), "--max-length", maxLength, 0, "the model's");
        OptionValues.outputTarget(new picocli.CommandLine(this), "--output", output, input);
        List<String> all = hasTexts ? texts : RerankCommand.readAll(input, textField);
        if (all.isEmpty()) throw AttnException.badInput(input + ": no texts");
        // the second texts: read by the same reader (blank lines skipped alike), so line i of one is line i of the
        // other
        List<String> second = hasPairs ? textPairs : pairField != null ? RerankCommand.readAll(input, pairField) : null;
        if (second != null && second.size() != all.size())
            throw AttnException.badInput(input + ": " + all.size() + " \"" + textField + "\" texts but " + second.size()
                    + " \"" + pairField + "\" texts");
        try (Engine engine = Engine.open(device.engineOptions());
                Classifier c = Classifier.load(
                        engine,
                        model,
                        EmbedderOptions.defaults()
                                .withMaxLength(OptionValues.atLeast(
                                        new picocli.CommandLine(this), "--max-length", maxLength, 0, "the model's")))) {
            System.err.println("attn: " + c.description() + "; " + engine.description());
            List<Classifier.Prediction> p =
                    c.predict(second == null ? c.tokenize(all) : c.tokenizePairs(all, second, false), raw);
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < p.size(); i++) {
                Classifier.Prediction x = p.get(i);
                if (output == null) {
                    StringBuilder b = new StringBuilder(
                            String.format(Locale.ROOT, "%5d  %-12s %10.6f ", i, x.label(), x.score()));
                    b.append(" [");
                    for (int k = 0; k < x.scores().length; k++)
                        b.append(k == 0 ? "" : ", ")
                                .append(c.labels().get(k))
                                .append(String.format(Locale.ROOT, " %.6f", x.scores()[k]));
                    String shown = second == null ? all.get(i) : all.get(i) + " | " + second.get(i);
                    System.out.println(b.append("]  ").append(ScoreOutput.shown(shown)));
                } else {
                    StringBuilder b = new StringBuilder("{\"index\":")
                            .append(i)
                            .append(",\"label\":")
                            .append(ScoreOutput.json(x.label()))
                            .append(",\"score\":")
                            .append(ScoreOutput.json(x.score()))
                            .append(",\"scores\":{");
                    for (int k = 0; k < x.scores().length; k++)
                        b.append(k == 0 ? "" : ",")
                                .append(ScoreOutput.json(c.labels().get(k)))
                                .append(':')
                                .append(ScoreOutput.json(x.scores()[k]));
                    lines.add(b.append("}}").toString());
                }
            }
            if (output != null) {
                ScoreOutput.write(output, lines);
                System.err.println("attn: wrote " + lines.size() + " predictions to " + output);
            }
        }
        return 0;
    }
}
