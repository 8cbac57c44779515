package io.attn.spark;

import io.attn.text.EmbedderOptions;
import java.util.Map;

/**
 * The command line of {@link EmbedJob}, parsed: {@code --model DIR --input PATH --output PATH [--text-col text]
 * [--master URL] [--partitions N]} and the embedding settings of {@code attn embed} ({@code --pooling}, {@code
 * --normalize}/{@code --no-normalize}, {@code --max-length}, {@code --batch-size}, {@code --batch-tokens}, {@code
 * --prompt-name}, {@code --task}, {@code --device}, {@code --threads}).
 *
 * <p>Immutable and thread-safe.
 */
record JobArgs(
        String model,
        String input,
        String output,
        String textCol,
        String master,
        int partitions,
        String pooling,
        Boolean normalize,
        int maxLength,
        int batchSize,
        int batchTokens,
        String promptName,
        String task,
        String device,
        int threads) {

    static final String USAGE = "usage: EmbedJob --model DIR --input PATH --output PATH [--text-col text]"
            + " [--master URL] [--partitions N] [--pooling mean|cls|max] [--normalize|--no-normalize]"
            + " [--max-length N] [--batch-size 256] [--batch-tokens N] [--prompt-name NAME] [--task NAME]"
            + " [--device auto|cpu|cuda] [--threads N]";

    /** A command line that cannot be run: exit 2 with the message and the usage line. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    static JobArgs parse(String... args) {
        Map<String, String> v = new java.util.HashMap<>();
        Boolean normalize = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--normalize" -> normalize = true;
                case "--no-normalize" -> normalize = false;
                case "--model",
                        "--input",
                        "--output",
                        "--text-col",
                        "--master",
                        "--partitions",
                        "--pooling",
                        "--max-length",
                        "--batch-size",
                        "--batch-tokens",
                        "--prompt-name",
                        "--task",
                        "--device",
                        "--threads" -> {
                    if (i + 1 >= args.length) throw new UsageException(a + " needs a value");
                    if (v.put(a, args[++i]) != null) throw new UsageException(a + " is given twice");
                }
                default -> throw new UsageException("unknown argument " + a);
            }
        }
        for (String required : new String[] {"--model", "--input", "--output"})
            if (!v.containsKey(required)) throw new UsageException(required + " is required");
        String pooling = choice(v, "--pooling", null, "mean", "cls", "max");
        String device = choice(v, "--device", "auto", "auto", "cpu", "cuda");
        return new JobArgs(
                v.get("--model"),
                v.get("--input"),
                v.get("--output"),
                v.getOrDefault("--text-col", "text"),
                v.get("--master"),
                number(v, "--partitions", 0, 0),
                pooling,
                normalize,
                number(v, "--max-length", 0, 0),
                number(v, "--batch-size", EmbedderOptions.DEFAULT_BATCH_SIZE, 1),
                number(v, "--batch-tokens", 0, 0), // 0: 4096, or the max length when longer
                v.get("--prompt-name"),
                v.get("--task"),
                device,
                number(v, "--threads", 0, 0));
    }

    private static String choice(Map<String, String> v, String name, String byDefault, String... allowed) {
        String s = v.get(name);
        if (s == null) return byDefault;
        String l = s.trim().toLowerCase(java.util.Locale.ROOT);
        if (!java.util.List.of(allowed).contains(l))
            throw new UsageException(name + " is one of " + String.join(", ", allowed) + ", got \"" + s + "\"");
        return l;
    }

    private static int number(Map<String, String> v, String name, int byDefault, int min) {
        String s = v.get(name);
        if (s == null) return byDefault;
        try {
            int n = Integer.parseInt(s.trim());
            if (n < min) throw new UsageException(name + " must be at least " + min + ", got " + s);
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException(name + " takes a whole number, got \"" + s + "\"");
        }
    }

    /** The transformer the job runs: these settings, {@code text} in, {@code embedding} ({@code array<float>}) out. */
    TextEmbedder embedder() {
        TextEmbedder t = new TextEmbedder()
                .setModelPath(model)
                .setInputCol("text")
                .setOutputCol("embedding")
                .setOutputType("array")
                .setMaxLength(maxLength)
                .setBatchSize(batchSize)
                .setBatchTokens(batchTokens)
                .setDevice(device)
                .setThreads(threads);
        if (pooling != null) t.setPooling(pooling);
        if (normalize != null) t.setNormalize(normalize);
        if (promptName != null) t.setPromptName(promptName);
        if (task != null) t.setTask(task);
        return t;
    }
}
