package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Embeddings;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn embed}: sentence embeddings with a Hugging Face model folder (or a BERT-family {@code .onnx} export),
 * through the library's {@link Embedder} as a service would use it. {@code --input} streams a {@code .txt} or {@code
 * .jsonl} file of any size in chunks to an {@code .npy} or {@code .jsonl} output written atomically; {@code --text}
 * prints the cosine-similarity table of a few texts.
 */
@Command(
        name = "embed",
        description = "Sentence embeddings of texts with a Hugging Face model folder or a BERT-family .onnx file.",
        sortOptions = false)
final class EmbedCommand implements Callable<Integer> {
    @Option(
            names = "--model",
            required = true,
            paramLabel = "DIR|FILE.onnx",
            description = "Hugging Face model folder (config.json, model.safetensors, tokenizer.json, and the"
                    + " sentence-transformers files when present), or a BERT-family .onnx export.")
    Path model;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            description = ".txt (one text per line, UTF-8; an empty line embeds [CLS] [SEP]) or .jsonl ({\"text\": ...}"
                    + " per line); streamed, never read whole.")
    Path input;

    @Option(
            names = "--output",
            paramLabel = "FILE",
            description = ".npy (float32, N x dim) or .jsonl ({\"index\": i, \"embedding\": [...]} per line), written"
                    + " atomically.")
    Path output;

    @Option(
            names = "--text",
            paramLabel = "TEXT",
            description = "A text to embed (repeatable): prints the cosine table.")
    List<String> texts;

    @Option(names = "--text-field", description = "The .jsonl field holding the text (default: ${DEFAULT-VALUE}).")
    String textField = "text";

    @Option(
            names = "--batch-size",
            paramLabel = "N",
            description = "Most texts per forward pass (default: " + EmbedderOptions.DEFAULT_BATCH_SIZE + ").")
    int batchSize = EmbedderOptions.DEFAULT_BATCH_SIZE;

    @Option(
            names = "--batch-tokens",
            paramLabel = "N",
            description = "Most tokens per forward pass, padding included (default: "
                    + EmbedderOptions.DEFAULT_BATCH_TOKENS
                    + ", or the max length when that is longer); bounds the working memory.")
    int batchTokens = 0; // EmbedderOptions' default

    @Mixin
    EmbedOptions embed;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        boolean hasTexts = texts != null && !texts.isEmpty();
        if (hasTexts == (input != null))
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "give either --input FILE or --text TEXT (repeatable)");
        if (input != null && output == null)
            throw new picocli.CommandLine.ParameterException(
                    new picocli.CommandLine(this), "--input needs --output (.npy or .jsonl)");
        if (output != null) EmbeddingWriter.checkFormat(output);
        OptionValues.outputTarget(new picocli.CommandLine(this), "--output", output, input);
        EmbedderOptions opts = options();
        try (Engine engine = Engine.open(device.engineOptions());
                Embedder m = Embedder.load(engine, model, opts)) {
            System.err.println("attn: " + m.description() + "; " + engine.description());
            if (hasTexts) return embedTexts(m);
            return embedFile(m);
        }
    }

    EmbedderOptions options() {
        var cmd = new picocli.CommandLine(this);
        return embed.options()
                .withMaxBatchSize(OptionValues.atLeast(cmd, "--batch-size", batchSize, 1, null))
                .withMaxBatchTokens(OptionValues.atLeast(cmd, "--batch-tokens", batchTokens, 0, "the default"));
    }

    private int embedTexts(Embedder m) {
        Embeddings e = m.embedWithUsage(texts);
        float[][] v = e.vectors();
        System.out.printf(
                Locale.ROOT,
                "%d embeddings of %d dimensions (%s pooling%s), %d tokens%n",
                v.length,
                m.dimension(),
                m.pooling().label(),
                m.normalize() ? ", normalized" : "",
                e.totalTokens());
        System.out.println("cosine similarity:");
        StringBuilder head = new StringBuilder("      ");
        for (int j = 0; j < v.length; j++) head.append(String.format(Locale.ROOT, "%8s", "[" + j + "]"));
        System.out.println(head);
        for (int i = 0; i < v.length; i++) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-6s", "[" + i + "]"));
            for (float[] w : v) row.append(String.format(Locale.ROOT, "%8.4f", cosine(v[i], w)));
            String t = texts.get(i).replaceAll("\\p{Cntrl}", " ");
            row.append("   ").append(t.length() > 60 ? t.substring(0, 57) + "..." : t);
            if (e.truncated()[i]) row.append(" (cut at ").append(m.maxLength()).append(" tokens)");
            System.out.println(row);
        }
        if (output != null) {
            try (EmbeddingWriter w = EmbeddingWriter.open(output, m.dimension())) {
                w.write(v);
                w.commit();
            }
            System.err.println("attn: wrote " + v.length + " embeddings to " + output);
        }
        return 0;
    }

    private int embedFile(Embedder m) {
        long total = EmbedProgress.enabled() ? TextLines.count(input, textField) : -1;
        EmbedProgress progress = new EmbedProgress(total);
        long tokens = 0, cut = 0;
        try (TextLines in = TextLines.open(input, textField);
                EmbeddingWriter w = EmbeddingWriter.open(output, m.dimension())) {
            List<String> chunk;
            while (!(chunk = in.next()).isEmpty()) {
                Embeddings e = m.embedWithUsage(chunk);
                w.write(e.vectors());
                tokens += e.totalTokens();
                for (boolean b : e.truncated()) if (b) cut++;
                progress.update(w.rows());
            }
            // as rerank, classify and bench do: an input without texts is refused, and nothing is written
            if (w.rows() == 0) throw AttnException.badInput(input + ": no texts");
            w.commit();
            progress.finish(w.rows(), tokens, cut, m.maxLength(), output);
        } catch (AttnException e) {
            progress.clear();
            throw e;
        }
        return 0;
    }

    static double cosine(float[] a, float[] b) {
        double ab = 0, aa = 0, bb = 0;
        for (int k = 0; k < a.length; k++) {
            ab += (double) a[k] * b[k];
            aa += (double) a[k] * a[k];
            bb += (double) b[k] * b[k];
        }
        return ab / Math.max(Math.sqrt(aa * bb), 1e-30);
    }
}
