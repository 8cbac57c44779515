package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.text.Embedder;
import io.attn.text.Embeddings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn bench embed}: sentences per second of {@code attn embed} in steady state: the model loaded once, the
 * texts of the file embedded as one call per pass (tokenization, batching, pooling included), after a warm-up. The
 * last line is one JSON object with {@code sentences_per_s} and {@code tokens_per_s} (real tokens, padding not
 * counted) and the CPU it ran on.
 */
@Command(name = "embed", description = "Sentences/s of attn embed on a text file, model loaded once.")
final class BenchEmbed implements Callable<Integer> {
    /** A bench input is held in memory: larger files are refused. */
    static final int MAX_TEXTS = 1_000_000;

    @Option(
            names = "--model",
            required = true,
            paramLabel = "DIR|FILE.onnx",
            description = "The model (as attn embed).")
    Path model;

    @Option(names = "--input", required = true, paramLabel = "FILE", description = ".txt or .jsonl texts.")
    Path input;

    @Option(names = "--text-field", description = "The .jsonl field holding the text (default: ${DEFAULT-VALUE}).")
    String textField = "text";

    @Option(names = "--batch-size", paramLabel = "N", description = "Most texts per forward pass.")
    int batchSize = io.attn.text.EmbedderOptions.DEFAULT_BATCH_SIZE;

    @Option(
            names = "--batch-tokens",
            paramLabel = "N",
            description = "Most tokens per forward pass (default: 4096, or the max length when that is longer).")
    int batchTokens = 0; // EmbedderOptions' default

    @Option(
            names = "--max-length",
            paramLabel = "N",
            description = "Truncate texts at N tokens (default: the model's).")
    int maxLength;

    @Option(
            names = "--task",
            paramLabel = "TASK",
            description = "The task adapter of a task LoRA model (jina-embeddings-v3) to run (default: none).")
    String task;

    @Option(
            names = "--task-adapters",
            paramLabel = "MODE",
            description = "merge (default: the adapter merged into the weights) or share (run beside them, as attn"
                    + " serve runs several tasks of one folder).")
    String taskAdapters;

    @Mixin
    BenchCommand.Timing timing;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        // option values first: a usage error before the input is read
        var opts = io.attn.text.EmbedderOptions.defaults()
                .withMaxBatchSize(
                        OptionValues.atLeast(new picocli.CommandLine(this), "--batch-size", batchSize, 1, null))
                .withMaxBatchTokens(OptionValues.atLeast(
                        new picocli.CommandLine(this), "--batch-tokens", batchTokens, 0, "the default"))
                .withMaxLength(OptionValues.atLeast(
                        new picocli.CommandLine(this), "--max-length", maxLength, 0, "the model's"))
                .withTask(task);
        if (taskAdapters != null)
            opts = opts.withTaskAdapters(OptionValues.taskAdapters(new picocli.CommandLine(this), taskAdapters));
        List<String> texts = new ArrayList<>();
        try (TextLines in = TextLines.open(input, textField)) {
            List<String> c;
            while (!(c = in.next()).isEmpty()) {
                texts.addAll(c);
                if (texts.size() > MAX_TEXTS)
                    throw AttnException.badInput(input + ": more than " + MAX_TEXTS + " texts: bench a sample");
            }
        }
        if (texts.isEmpty()) throw AttnException.badInput(input + ": no texts");
        try (Engine engine = Engine.open(device.engineOptions());
                Embedder m = Embedder.load(engine, model, opts)) {
            Embeddings first = m.embedWithUsage(texts);
            long tokens = first.totalTokens();
            long end = System.nanoTime() + timing.warmupMs * 1_000_000;
            while (System.nanoTime() < end) m.embed(texts);
            double[] ms = new double[Math.max(timing.minRuns, 1) * 64];
            int n = 0;
            long start = System.nanoTime();
            while (n < ms.length && (n < timing.minRuns || System.nanoTime() - start < timing.minMs * 1_000_000)) {
                long s = System.nanoTime();
                m.embed(texts);
                ms[n++] = (System.nanoTime() - s) / 1e6;
            }
            double[] r = Arrays.copyOf(ms, n);
            Arrays.sort(r);
            double median = n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
            double sps = texts.size() / (median / 1e3), tps = tokens / (median / 1e3);
            String cpu = io.attn.engine.Devices.hostCpu();
            System.out.printf(
                    Locale.ROOT,
                    "bench embed %s: %d texts, %d tokens, on %s; %s%s%n",
                    m.name(),
                    texts.size(),
                    tokens,
                    engine.description(),
                    cpu,
                    engine.weightBytes() < 0
                            ? ""
                            : String.format(Locale.ROOT, "; weights on the device: %d bytes", engine.weightBytes()));
            System.out.printf(
                    Locale.ROOT,
                    "  runs %d, median %.2f ms, min %.2f ms, max %.2f ms: %.1f sentences/s," + " %.0f tokens/s%n",
                    n,
                    median,
                    r[0],
                    r[n - 1],
                    sps,
                    tps);
            System.out.printf(
                    Locale.ROOT,
                    "{\"bench\":\"embed\",\"device\":\"%s\",\"threads\":%d,\"model\":\"%s\",\"texts\":%d,\"tokens\":%d,"
                            + "\"median_ms\":%.3f,\"min_ms\":%.3f,\"runs\":%d,\"sentences_per_s\":%.2f,"
                            + "\"tokens_per_s\":%.1f,\"weights_bytes\":%d,\"cpu\":%s}%n",
                    engine.device(),
                    BenchCommand.threadsOf(device),
                    m.name().replace("\"", "'"),
                    texts.size(),
                    tokens,
                    median,
                    r[0],
                    n,
                    sps,
                    tps,
                    engine.weightBytes(),
                    io.attn.engine.Devices.hostCpuJson());
        }
        return 0;
    }
}
