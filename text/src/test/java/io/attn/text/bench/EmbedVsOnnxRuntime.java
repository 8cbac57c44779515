package io.attn.text.bench;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Pooling;
import java.io.IOException;
import java.io.InputStream;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Sentences per second of attn's {@link Embedder} against ONNX Runtime Java running the same model exported with
 * {@code torch.onnx.export} (a sentence-transformers folder with {@code onnx/model.onnx} beside it, as {@code
 * tools/make_families.py --shape multilingual-e5-small} writes), alternating A and B within one JVM so that both see the
 * same machine. Both sides do the whole job, text in, vector out: the same {@code tokenizer.json} through the same
 * Hugging Face tokenizers library (DJL's {@link HuggingFaceTokenizer}, with the model's default prompt put before each
 * text as attn and sentence-transformers do), the same pooling and normalization (the model's
 * {@code 1_Pooling/config.json} and {@code 2_Normalize}, done in Java on ONNX Runtime's {@code last_hidden_state}).
 * Before timing, every text's vector from both sides must agree (cosine > 0.9999). Not a test: run by {@code
 * benchmarks/scripts/embed_vs_onnxruntime.sh}.
 *
 * <pre>
 * args: MODEL_DIR [texts.txt] [rounds] [seconds per side and round] [threads, both sides] [batch|single|sorted]
 * </pre>
 *
 * <ul>
 *   <li>{@code batch} (the default): all texts in one call each; ONNX Runtime gets them as one batch padded to the
 *       longest text, {@code input_ids} and {@code attention_mask} (int64), as its users feed it; attn plans its own
 *       batches (ragged on the CPU);
 *   <li>{@code single}: one text per call, in turn (a service embedding each request as it comes);
 *   <li>{@code sorted}: all texts in one call, ONNX Runtime in batches of 32 texts of similar lengths (sorted by token
 *       count, as sentence-transformers' {@code encode} batches), so that it pads less.
 * </ul>
 *
 * ONNX Runtime: CPU execution provider, {@code ALL_OPT}, intra-op threads = the thread count, inter-op 1, its pool's
 * spinning off ({@code session.intra_op.allow_spinning=0}, as {@code io.attn.benchmarks.Workload} runs it for more
 * than one thread; {@code -Dort.spin=true} turns it on). With spinning on, its worker kept spinning seconds into
 * attn's round and both sides ran 2.5x slower on a 2-core machine (docs/performance.md). Prints each round's figures
 * and the 1-minute load, then the medians and one JSON line.
 */
public final class EmbedVsOnnxRuntime {
    private EmbedVsOnnxRuntime() {}

    /** What ONNX Runtime's side batches per run in {@code sorted} mode (sentence-transformers' default batch size). */
    static final int SORTED_BATCH = 32;

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("args: MODEL_DIR [texts.txt] [rounds] [seconds] [threads] [batch|single|sorted]");
            System.exit(2);
        }
        Path folder = Path.of(args[0]);
        List<String> texts = args.length > 1 && !args[1].isEmpty()
                ? Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)
                : readResource("io/attn/text/mixed.txt");
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 4;
        int threads = args.length > 4 ? Integer.parseInt(args[4]) : 2;
        if (threads <= 0) threads = Runtime.getRuntime().availableProcessors();
        String mode = args.length > 5 ? args[5] : "batch";
        if (!List.of("batch", "single", "sorted").contains(mode))
            throw new IllegalArgumentException("the 6th argument is batch, single or sorted, not " + mode);
        boolean single = mode.equals("single");
        Path onnx = folder.resolve("onnx/model.onnx");

        try (Engine engine =
                        Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(threads));
                Embedder ours = Embedder.load(engine, folder, options(folder));
                Ort theirs = new Ort(folder, onnx, ours, threads, mode.equals("sorted") ? SORTED_BATCH : 0)) {
            long tokens = ours.embedWithUsage(texts).totalTokens();
            // (one text per call: the padded batch is not checked, as it is not timed; with a long text it is slow)
            if (!single) check(ours.embed(texts), theirs.embed(texts), "all texts in one call");
            float[][] one = new float[texts.size()][], oneOrt = new float[texts.size()][];
            for (int i = 0; i < texts.size(); i++) {
                one[i] = ours.embed(List.of(texts.get(i)))[0];
                oneOrt[i] = theirs.embed(List.of(texts.get(i)))[0];
            }
            double minCos = check(one, oneOrt, "one text per call");

            Runnable oursCall = single ? () -> texts.forEach(t -> ours.embed(List.of(t))) : () -> ours.embed(texts);
            Runnable theirsCall =
                    single ? () -> texts.forEach(t -> theirs.embed(List.of(t))) : () -> theirs.embed(texts);
            String what =
                    switch (mode) {
                        case "single" -> "one text per call";
                        case "sorted" ->
                            "all texts in one call; ONNX Runtime in length-sorted batches of " + SORTED_BATCH;
                        default -> "all texts in one call; ONNX Runtime one batch padded to the longest";
                    };
            System.out.printf(
                    Locale.ROOT,
                    "%s: %d texts, %d tokens (prompt \"%s\", %s), ONNX Runtime %s fed %d tokens per pass; %s;"
                            + " min cosine attn vs ONNX Runtime %.7f%n",
                    ours.name(),
                    texts.size(),
                    tokens,
                    ours.defaultPrompt(),
                    ours.description(),
                    theirs.env.getVersion(),
                    theirs.paddedTokens(texts, single),
                    what,
                    minCos);
            System.out.printf(
                    Locale.ROOT,
                    "attn on %s; ONNX Runtime intra-op %d, inter-op 1, spinning %s; %s%n",
                    engine.description(),
                    threads,
                    Ort.spin() ? "on" : "off",
                    EmbedVsLangchain4j.cpu());
            // warm-up: both JITs and both engines' first calls (-Dbench.warmup=N, default 2: fewer for a big model)
            for (int i = 0; i < Integer.getInteger("bench.warmup", 2); i++) {
                oursCall.run();
                theirsCall.run();
            }
            double[] a = new double[rounds], b = new double[rounds], ratio = new double[rounds];
            double[] load = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                load[r] = loadAverage();
                // alternate which side goes first, so neither always follows the other's pool threads
                if (r % 2 == 0) {
                    a[r] = rate(oursCall, texts.size(), seconds);
                    b[r] = rate(theirsCall, texts.size(), seconds);
                } else {
                    b[r] = rate(theirsCall, texts.size(), seconds);
                    a[r] = rate(oursCall, texts.size(), seconds);
                }
                ratio[r] = a[r] / b[r];
                System.out.printf(
                        Locale.ROOT,
                        "round %d: attn %.1f sentences/s, ONNX Runtime %.1f, ratio %.3f (load %.2f)%n",
                        r,
                        a[r],
                        b[r],
                        ratio[r],
                        load[r]);
            }
            double endLoad = loadAverage();
            System.out.printf(
                    Locale.ROOT,
                    "median: attn %.1f sentences/s, ONNX Runtime %.1f, ratio %.3f (rounds %.3f-%.3f); load %.2f-%.2f%n",
                    median(a),
                    median(b),
                    median(ratio),
                    Arrays.stream(ratio).min().orElse(0),
                    Arrays.stream(ratio).max().orElse(0),
                    Math.min(Arrays.stream(load).min().orElse(endLoad), endLoad),
                    Math.max(Arrays.stream(load).max().orElse(endLoad), endLoad));
            System.out.printf(
                    Locale.ROOT,
                    "{\"bench\":\"embed_vs_onnxruntime\",\"model\":\"%s\",\"mode\":\"%s\",\"texts\":%d,\"tokens\":%d,"
                            + "\"ort_tokens\":%d,\"threads\":%d,\"attn_sentences_per_s\":%.2f,"
                            + "\"ort_sentences_per_s\":%.2f,\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,"
                            + "\"rounds\":%d,\"seconds\":%.1f,\"min_cosine\":%.7f,\"ort_version\":\"%s\",\"ort_spin\":%b,"
                            + "\"load\":[%.2f,%.2f],\"cpu\":\"%s\"}%n",
                    ours.name(),
                    mode,
                    texts.size(),
                    tokens,
                    theirs.paddedTokens(texts, single),
                    threads,
                    median(a),
                    median(b),
                    median(ratio),
                    Arrays.stream(ratio).min().orElse(0),
                    Arrays.stream(ratio).max().orElse(0),
                    rounds,
                    seconds,
                    minCos,
                    theirs.env.getVersion(),
                    Ort.spin(),
                    Math.min(Arrays.stream(load).min().orElse(endLoad), endLoad),
                    Math.max(Arrays.stream(load).max().orElse(endLoad), endLoad),
                    EmbedVsLangchain4j.cpu());
        }
        System.exit(0);
    }

    /**
     * The default options: their batch token budget is 4096, or the model's max length where that is longer (a
     * ModernBERT of 8192 positions), as a user gets them.
     */
    static EmbedderOptions options(Path folder) {
        return EmbedderOptions.defaults();
    }

    /**
     * ONNX Runtime's side: the model's tokenizer.json through DJL (as attn tokenizes: no padding, cut at the
     * embedder's max length, special tokens added), the default prompt before each text, int64 {@code input_ids} and
     * {@code attention_mask} padded with the model's pad id, {@code last_hidden_state} pooled and normalized in Java.
     */
    static final class Ort implements AutoCloseable {
        final OrtEnvironment env = OrtEnvironment.getEnvironment();
        final OrtSession session;
        final HuggingFaceTokenizer tokenizer;
        final String prompt;
        final Pooling pooling;
        final boolean normalize;
        final long pad;
        final int width, batch;

        static boolean spin() {
            return Boolean.getBoolean("ort.spin");
        }

        Ort(Path folder, Path onnx, Embedder like, int threads, int batch) throws IOException, OrtException {
            this.batch = batch;
            this.prompt = like.defaultPrompt();
            this.pooling = like.pooling();
            this.normalize = like.normalize();
            this.width = like.dimension();
            if (pooling != Pooling.MEAN && pooling != Pooling.CLS)
                throw new IllegalArgumentException("pooling " + pooling + ": this benchmark pools mean or cls");
            if (!prompt.isEmpty() && !like.prompts().includePrompt())
                throw new IllegalArgumentException("a prompt left out of the pooling: not done by this benchmark");
            JsonObject config = JsonParser.parseString(Files.readString(folder.resolve("config.json")))
                    .getAsJsonObject();
            this.pad = config.has("pad_token_id") && !config.get("pad_token_id").isJsonNull()
                    ? config.get("pad_token_id").getAsLong()
                    : 0;
            this.tokenizer = HuggingFaceTokenizer.newInstance(
                    folder.resolve("tokenizer.json"),
                    Map.of(
                            "padding",
                            "false",
                            "truncation",
                            "true",
                            "maxLength",
                            String.valueOf(like.maxLength()),
                            "modelMaxLength",
                            String.valueOf(like.maxLength()),
                            "addSpecialTokens",
                            "true"));
            OrtSession.SessionOptions o = new OrtSession.SessionOptions();
            o.setIntraOpNumThreads(threads);
            o.setInterOpNumThreads(1);
            if (!spin()) o.addConfigEntry("session.intra_op.allow_spinning", "0");
            o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            this.session = env.createSession(onnx.toString(), o);
        }

        long[][] ids(List<String> texts) {
            String[] in = texts.stream().map(t -> prompt + t).toArray(String[]::new);
            Encoding[] enc = tokenizer.batchEncode(in, true, false);
            long[][] ids = new long[enc.length][];
            for (int i = 0; i < enc.length; i++) ids[i] = enc[i].getIds();
            return ids;
        }

        /** The tokens (padding included) one pass over {@code texts} feeds ONNX Runtime. */
        long paddedTokens(List<String> texts, boolean single) {
            long[][] ids = ids(texts);
            if (single) return Arrays.stream(ids).mapToLong(a -> a.length).sum();
            long n = 0;
            for (int[] g : groups(ids)) {
                int longest = 0;
                for (int i : g) longest = Math.max(longest, ids[i].length);
                n += (long) longest * g.length;
            }
            return n;
        }

        /** The runs of one call: all texts in one, or length-sorted groups of {@link #batch}. */
        List<int[]> groups(long[][] ids) {
            Integer[] order = new Integer[ids.length];
            for (int i = 0; i < order.length; i++) order[i] = i;
            if (batch <= 0 || batch >= ids.length)
                return List.of(Arrays.stream(order).mapToInt(Integer::intValue).toArray());
            Arrays.sort(order, Comparator.comparingInt(i -> ids[i].length));
            List<int[]> out = new ArrayList<>();
            for (int s = 0; s < order.length; s += batch)
                out.add(Arrays.stream(order, s, Math.min(order.length, s + batch))
                        .mapToInt(Integer::intValue)
                        .toArray());
            return out;
        }

        float[][] embed(List<String> texts) {
            long[][] ids = ids(texts);
            float[][] out = new float[ids.length][];
            try {
                for (int[] g : groups(ids)) run(ids, g, out);
            } catch (OrtException e) {
                throw new IllegalStateException(e);
            }
            return out;
        }

        private void run(long[][] ids, int[] group, float[][] out) throws OrtException {
            int b = group.length, len = 0;
            for (int i : group) len = Math.max(len, ids[i].length);
            long[] flat = new long[b * len], mask = new long[b * len];
            for (int r = 0; r < b; r++) {
                long[] t = ids[group[r]];
                Arrays.fill(flat, r * len, (r + 1) * len, pad);
                System.arraycopy(t, 0, flat, r * len, t.length);
                Arrays.fill(mask, r * len, r * len + t.length, 1L);
            }
            long[] shape = {b, len};
            try (OnnxTensor inIds = OnnxTensor.createTensor(env, LongBuffer.wrap(flat), shape);
                    OnnxTensor inMask = OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape);
                    OrtSession.Result res = session.run(Map.of("input_ids", inIds, "attention_mask", inMask))) {
                FloatBuffer h = ((OnnxTensor) res.get(0)).getFloatBuffer();
                int e = width;
                for (int r = 0; r < b; r++) {
                    int n = ids[group[r]].length, base = r * len * e;
                    float[] v = new float[e];
                    if (pooling == Pooling.CLS) h.get(base, v);
                    else {
                        double[] sum = new double[e];
                        for (int t = 0; t < n; t++) for (int k = 0; k < e; k++) sum[k] += h.get(base + t * e + k);
                        for (int k = 0; k < e; k++) v[k] = (float) (sum[k] / Math.max(n, 1));
                    }
                    if (normalize) Embedder.normalize(v);
                    out[group[r]] = v;
                }
            }
        }

        @Override
        public void close() throws OrtException {
            session.close();
            tokenizer.close();
        }
    }

    /** Every text's two vectors must agree (cosine > 0.9999); returns the smallest cosine. */
    private static double check(float[][] a, float[][] b, String what) {
        double min = 1;
        for (int i = 0; i < a.length; i++) {
            double dot = 0, na = 0, nb = 0;
            for (int k = 0; k < a[i].length; k++) {
                dot += (double) a[i][k] * b[i][k];
                na += (double) a[i][k] * a[i][k];
                nb += (double) b[i][k] * b[i][k];
            }
            double cos = dot / Math.sqrt(na * nb);
            if (!(cos > 0.9999))
                throw new IllegalStateException(
                        what + ": text " + i + ": attn and ONNX Runtime vectors differ, cosine " + cos);
            min = Math.min(min, cos);
        }
        return min;
    }

    private static double loadAverage() {
        try {
            return Double.parseDouble(
                    Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
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

    private static List<String> readResource(String name) throws IOException {
        try (InputStream in = EmbedVsOnnxRuntime.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException(name + " not on the class path");
            return new ArrayList<>(new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .toList());
        }
    }
}
