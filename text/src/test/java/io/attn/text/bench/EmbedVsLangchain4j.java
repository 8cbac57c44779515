package io.attn.text.bench;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15.BgeSmallEnV15EmbeddingModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import io.attn.text.TextModel;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Sentences per second of attn's {@link Embedder} against langchain4j's stock in-process embedding model
 * ({@code embedAll}: ONNX Runtime, one text per run, a task per text on a pool of one thread per core), on the same
 * texts and the same model (langchain4j's own ONNX file, converted to a Hugging Face folder as {@code attn convert}
 * does), alternating A and B within one JVM so that both see the same machine. Not a test: run by
 * {@code benchmarks/scripts/embed_vs_langchain4j.sh}.
 *
 * <pre>
 * args: [minilm|minilm-q|bge] [texts.txt] [rounds] [seconds per side and round] [attn threads, 0 = all] [batch|single]
 * </pre>
 *
 * {@code batch} (the default) gives each engine all the texts in one call; {@code single} one text per call, in turn
 * (a service embedding each request as it comes: {@code embed(List.of(text))} against langchain4j's
 * {@code embed(text)}, ONNX Runtime's intra-op pool then splitting each run over its threads).
 *
 * Prints each round's figures, then the medians and one JSON line.
 */
public final class EmbedVsLangchain4j {
    private EmbedVsLangchain4j() {}

    public static void main(String[] args) throws Exception {
        String which = args.length > 0 ? args[0] : "minilm";
        boolean bge = which.equals("bge");
        boolean quantized = which.equals("minilm-q"); // issue 37: langchain4j's int8 model, its .onnx run directly
        if (!bge && !quantized && !which.equals("minilm"))
            throw new IllegalArgumentException("the model is minilm, minilm-q or bge, not " + which);
        List<String> texts = args.length > 1 && !args[1].isEmpty()
                ? Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)
                : readResource("io/attn/text/mixed.txt");
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 3;
        int threads = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        boolean single = args.length > 5 && args[5].equals("single");
        if (args.length > 5 && !single && !args[5].equals("batch"))
            throw new IllegalArgumentException("the 6th argument is batch or single, not " + args[5]);

        Path dir = Files.createTempDirectory("attn-bench");
        String base = bge ? "bge-small-en-v1.5" : quantized ? "all-minilm-l6-v2-q" : "all-minilm-l6-v2";
        Path onnx = copy(base + ".onnx", dir), tok = copy(base + "-tokenizer.json", dir);
        Path folder = dir.resolve(base);
        EmbedderOptions options = EmbedderOptions.defaults();
        if (quantized) { // int8 weights are not written as a folder (yet): the .onnx file is loaded as it is
            folder = onnx;
            options = options.withPooling(Pooling.MEAN).withNormalize(true).withTokenizer(tok);
        } else TextModel.read(onnx, tok).writeFolder(folder, bge ? Pooling.CLS : Pooling.MEAN, true);

        EmbeddingModel peer = bge
                ? new BgeSmallEnV15EmbeddingModel()
                : quantized
                        ? new dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel()
                        : new AllMiniLmL6V2EmbeddingModel();
        List<TextSegment> segments = texts.stream().map(TextSegment::from).toList();
        double[] ours = new double[rounds], theirs = new double[rounds];
        try (Engine engine =
                        Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(threads));
                Embedder m = Embedder.load(engine, folder, options)) {
            long tokens = m.embedWithUsage(texts).totalTokens();
            Runnable oursCall = single ? () -> texts.forEach(t -> m.embed(List.of(t))) : () -> m.embed(texts);
            Runnable theirsCall = single ? () -> segments.forEach(peer::embed) : () -> peer.embedAll(segments);
            System.out.printf(
                    Locale.ROOT,
                    "%s: %d texts, %d tokens, %s; attn on %s; %s%n",
                    base,
                    texts.size(),
                    tokens,
                    single ? "one text per call" : "all texts in one call",
                    engine.description(),
                    cpu());
            // warm-up: both JITs and both models' first calls, twice; -Dbench.warmup-s=S: on, alternating, until S
            // seconds have passed (the JVM's compiler threads then no longer take cores from the measured threads)
            long warmEnd =
                    System.nanoTime() + (long) (Double.parseDouble(System.getProperty("bench.warmup-s", "0")) * 1e9);
            for (int i = 0; i < 2 || System.nanoTime() < warmEnd; i++) {
                oursCall.run();
                theirsCall.run();
            }
            for (int r = 0; r < rounds; r++) {
                ours[r] = rate(oursCall, texts.size(), seconds);
                theirs[r] = rate(theirsCall, texts.size(), seconds);
                System.out.printf(
                        Locale.ROOT,
                        "round %d: attn %.1f sentences/s, langchain4j %.1f, ratio %.3f%n",
                        r,
                        ours[r],
                        theirs[r],
                        ours[r] / theirs[r]);
            }
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) ratio[r] = ours[r] / theirs[r];
            System.out.printf(
                    Locale.ROOT,
                    "median: attn %.1f sentences/s, langchain4j %.1f, ratio %.3f (rounds %.3f-%.3f)%n",
                    median(ours),
                    median(theirs),
                    median(ratio),
                    Arrays.stream(ratio).min().orElse(0),
                    Arrays.stream(ratio).max().orElse(0));
            System.out.printf(
                    Locale.ROOT,
                    "{\"bench\":\"embed_vs_langchain4j\",\"model\":\"%s\",\"mode\":\"%s\",\"texts\":%d,\"tokens\":%d,"
                            + "\"attn_sentences_per_s\":%.2f,\"langchain4j_sentences_per_s\":%.2f,\"ratio\":%.4f,"
                            + "\"rounds\":%d,\"cpu\":\"%s\"}%n",
                    base,
                    single ? "single" : "batch",
                    texts.size(),
                    tokens,
                    median(ours),
                    median(theirs),
                    median(ratio),
                    rounds,
                    cpu());
        }
        System.exit(0); // langchain4j's pool threads linger
    }

    private static double rate(Runnable call, int texts, double seconds) {
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        int n = 0;
        do {
            call.run();
            n++;
        } while (System.nanoTime() < end);
        return (double) n * texts / ((System.nanoTime() - start) / 1e9);
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static Path copy(String resource, Path dir) throws IOException {
        Path p = dir.resolve(resource);
        try (InputStream in = EmbedVsLangchain4j.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException(resource + " not on the class path");
            Files.copy(in, p);
        }
        return p;
    }

    private static List<String> readResource(String name) throws IOException {
        try (InputStream in = EmbedVsLangchain4j.class.getClassLoader().getResourceAsStream(name)) {
            return new ArrayList<>(new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .toList());
        }
    }

    static String cpu() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            String name = "?", fam = "?", model = "?", flags = "";
            for (String l : lines) {
                int c = l.indexOf(':');
                if (c < 0) continue;
                String k = l.substring(0, c).trim(), v = l.substring(c + 1).trim();
                if (k.equals("model name") && name.equals("?")) name = v;
                else if (k.equals("cpu family") && fam.equals("?")) fam = v;
                else if (k.equals("model") && model.equals("?")) model = v;
                else if (k.equals("flags") && flags.isEmpty()) flags = " " + v + " ";
            }
            String isa = flags.contains(" avx512f ") ? "AVX-512" : flags.contains(" avx2 ") ? "AVX2" : "no AVX2";
            return name + " (family " + fam + " model " + model + ", " + isa + ", "
                    + Runtime.getRuntime().availableProcessors() + " cores)";
        } catch (IOException e) {
            return System.getProperty("os.arch");
        }
    }
}
