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
 * label's score, or writes JSON lines {@code {"index", "label", "score", "scores": {label: score}}}.
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

    @Option(names = "--text-field", description = "The .jsonl field holding the text (default: ${DEFAULT-VALUE}).")
    String textField = "text";

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
        List<String> all = hasTexts ? texts : RerankCommand.readAll(input, textField);
        if (all.isEmpty()) throw AttnException.badInput(input + ": no texts");
        try (Engine engine = Engine.open(device.engineOptions());
                Classifier c = Classifier.load(
                        engine, model, EmbedderOptions.defaults().withMaxLength(maxLength))) {
            System.err.println("attn: " + c.description() + "; " + engine.description());
            List<Classifier.Prediction> p = c.predict(c.tokenize(all), raw);
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
                    System.out.println(b.append("]  ").append(ScoreOutput.shown(all.get(i))));
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
