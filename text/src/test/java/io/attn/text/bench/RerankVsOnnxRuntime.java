package io.attn.text.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.EmbedderOptions;
import io.attn.text.RerankBenchAccess;
import io.attn.text.Reranker;
import io.attn.text.TokenizedTexts;
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
import java.util.function.Supplier;

/**
 * (query, passage) pairs per second of attn's {@link Reranker} against ONNX Runtime Java running the same
 * cross-encoder exported with {@code torch.onnx.export} (a {@code CrossEncoder.save} folder with {@code
 * onnx/model.onnx} beside it, inputs {@code input_ids}, {@code attention_mask}, {@code token_type_ids}, output {@code
 * logits}, as {@code tools/make_rerank_bench.py} writes), in one JVM, the sides taking turns within each round so
 * that all see the same machine. One query and 100 passages of 10 to 200 words ({@code rerank-passages.txt}); every
 * call scores all the pairs, text in, raw logits out: attn's {@link Reranker#score(String, List, boolean)}, and for
 * ONNX Runtime attn's own {@link Reranker#tokenize} (so both sides pay for the same tokenizer and run the same token
 * ids) then one run per batch. Before timing: attn's ids and token types must equal those transformers' tokenizer
 * gave each pair (the folder's {@code expected.json}, when the passages are the default ones), and every pair's logit
 * from each ONNX Runtime variant must be within 1e-4 of attn's (and of CrossEncoder's, from {@code expected.json}).
 * Not a test: run by {@code benchmarks/scripts/rerank_vs_onnxruntime.sh}.
 *
 * <pre>
 * args: MODEL_DIR [passages.txt] [rounds] [seconds per side and round] [threads, both sides] [variants]
 * </pre>
 *
 * ONNX Runtime's variants (comma-separated, default all four):
 *
 * <ul>
 *   <li>{@code padded}: all pairs in one batch padded to the longest pair, as its users feed it;
 *   <li>{@code plan}: the batches attn runs (consecutive pairs up to 4096 tokens: ragged in attn, no padding), each
 *       padded to its longest pair;
 *   <li>{@code sorted}: length-sorted batches of 32 pairs (little padding);
 *   <li>{@code each}: one pair per run: no padding at all, the very tokens attn runs.
 * </ul>
 *
 * ONNX Runtime: CPU execution provider, {@code ALL_OPT}, intra-op threads = the thread count, inter-op 1, its pool's
 * spinning off ({@code session.intra_op.allow_spinning=0}; {@code -Dort.spin=true} turns it on), as {@link
 * EmbedVsOnnxRuntime}. Prints each round's figures and the 1-minute load, then the medians and one JSON line per
 * variant.
 */
public final class RerankVsOnnxRuntime {
    private RerankVsOnnxRuntime() {}

    /** The query of every pair (tools/make_rerank_bench.py's QUERY). */
    static final String QUERY = "how do transformer models use attention to rank search results?";

    static final int SORTED_BATCH = 32;
    static final double TOLERANCE = 1e-4;

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("args: MODEL_DIR [passages.txt] [rounds] [seconds] [threads] [padded,plan,sorted,each]");
            System.exit(2);
        }
        Path folder = Path.of(args[0]);
        boolean defaultPassages = args.length <= 1 || args[1].isEmpty();
        List<String> passages = !defaultPassages
                ? Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)
                : readResource("io/attn/text/rerank-passages.txt");
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 3;
        int threads = args.length > 4 ? Integer.parseInt(args[4]) : 2;
        if (threads <= 0) threads = Runtime.getRuntime().availableProcessors();
        List<String> variants = List.of(
                (args.length > 5 && !args[5].isEmpty() && !args[5].equals("all") ? args[5] : "padded,plan,sorted,each")
                        .split(","));
        for (String v : variants)
            if (!List.of("padded", "plan", "sorted", "each").contains(v))
                throw new IllegalArgumentException("variant " + v + ": padded, plan, sorted or each");

        try (Engine engine =
                        Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(threads));
                Reranker ours = Reranker.load(engine, folder, EmbedderOptions.defaults());
                Ort theirs = new Ort(folder.resolve("onnx/model.onnx"), threads)) {
            TokenizedTexts pairs = ours.tokenize(QUERY, passages);
            long tokens = pairs.totalTokens();
            String idsCheck = checkIds(folder, pairs, passages, defaultPassages);
            float[] mine = ours.score(QUERY, passages, true);
            String ceCheck = checkCrossEncoder(folder, mine, defaultPassages);
            List<Supplier<float[]>> sides = new ArrayList<>();
            List<String> names = new ArrayList<>();
            names.add("attn");
            sides.add(() -> ours.score(QUERY, passages, true));
            double[] maxDiff = new double[variants.size()];
            long[] fed = new long[variants.size()];
            for (int v = 0; v < variants.size(); v++) {
                String variant = variants.get(v);
                List<int[]> g = groups(variant, pairs);
                fed[v] = Ort.fed(pairs, g);
                float[] theirsScores = theirs.score(pairs, g);
                for (int i = 0; i < mine.length; i++)
                    maxDiff[v] = Math.max(maxDiff[v], Math.abs((double) mine[i] - theirsScores[i]));
                if (!(maxDiff[v] <= TOLERANCE))
                    throw new IllegalStateException(
                            "ONNX Runtime " + variant + ": logits differ from attn's by " + maxDiff[v]);
                names.add("ort-" + variant);
                sides.add(() -> {
                    TokenizedTexts t = ours.tokenize(QUERY, passages);
                    return theirs.score(t, groups(variant, t));
                });
            }
            System.out.printf(
                    Locale.ROOT,
                    "%s (%s): %d pairs, %d tokens (%.0f per pair), ONNX Runtime %s fed %s tokens per pass (%s);"
                            + " %s; %s; max |logit attn - ONNX Runtime| %s%n",
                    ours.name(),
                    ours.description(),
                    passages.size(),
                    tokens,
                    (double) tokens / passages.size(),
                    theirs.env.getVersion(),
                    Arrays.toString(fed),
                    String.join(", ", variants),
                    idsCheck,
                    ceCheck,
                    Arrays.toString(Arrays.stream(maxDiff)
                            .mapToObj(d -> String.format(Locale.ROOT, "%.2g", d))
                            .toArray()));
            System.out.printf(
                    Locale.ROOT,
                    "attn on %s, its batches %s pairs; ONNX Runtime intra-op %d, inter-op 1, spinning %s; %s%n",
                    engine.description(),
                    RerankBenchAccess.raggedBatches(pairs).stream()
                            .map(b -> String.valueOf(b.length))
                            .toList(),
                    threads,
                    Ort.spin() ? "on" : "off",
                    EmbedVsLangchain4j.cpu());
            int n = sides.size();
            for (Supplier<float[]> s : sides) s.get(); // warm-up: the checks above already ran each side once
            double[][] rate = new double[n][rounds], ratio = new double[n][rounds];
            double[] load = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                load[r] = loadAverage();
                // rotate which side goes first, so that none always follows another's pool threads
                for (int k = 0; k < n; k++) {
                    int s = (r + k) % n;
                    rate[s][r] = rate(sides.get(s), passages.size(), seconds);
                }
                StringBuilder line =
                        new StringBuilder(String.format(Locale.ROOT, "round %d: attn %.1f pairs/s", r, rate[0][r]));
                for (int s = 1; s < n; s++) {
                    ratio[s][r] = rate[0][r] / rate[s][r];
                    line.append(String.format(
                            Locale.ROOT, ", %s %.1f (ratio %.3f)", names.get(s), rate[s][r], ratio[s][r]));
                }
                System.out.println(line.append(String.format(Locale.ROOT, " (load %.2f)", load[r])));
            }
            double endLoad = loadAverage();
            double loMin = Math.min(Arrays.stream(load).min().orElse(endLoad), endLoad);
            double loMax = Math.max(Arrays.stream(load).max().orElse(endLoad), endLoad);
            for (int s = 1; s < n; s++) {
                System.out.printf(
                        Locale.ROOT,
                        "median: attn %.1f pairs/s, %s %.1f, ratio %.3f (rounds %.3f-%.3f); load %.2f-%.2f%n",
                        median(rate[0]),
                        names.get(s),
                        median(rate[s]),
                        median(ratio[s]),
                        Arrays.stream(ratio[s]).min().orElse(0),
                        Arrays.stream(ratio[s]).max().orElse(0),
                        loMin,
                        loMax);
            }
            for (int s = 1; s < n; s++) {
                System.out.printf(
                        Locale.ROOT,
                        "{\"bench\":\"rerank_vs_onnxruntime\",\"model\":\"%s\",\"variant\":\"%s\",\"pairs\":%d,"
                                + "\"tokens\":%d,\"ort_tokens\":%d,\"threads\":%d,\"attn_pairs_per_s\":%.2f,"
                                + "\"ort_pairs_per_s\":%.2f,\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,"
                                + "\"rounds\":%d,\"seconds\":%.1f,\"max_abs_logit_diff\":%.3g,\"ort_version\":\"%s\","
                                + "\"ort_spin\":%b,\"load\":[%.2f,%.2f],\"cpu\":\"%s\"}%n",
                        ours.name(),
                        variants.get(s - 1),
                        passages.size(),
                        tokens,
                        fed[s - 1],
                        threads,
                        median(rate[0]),
                        median(rate[s]),
                        median(ratio[s]),
                        Arrays.stream(ratio[s]).min().orElse(0),
                        Arrays.stream(ratio[s]).max().orElse(0),
                        rounds,
                        seconds,
                        maxDiff[s - 1],
                        theirs.env.getVersion(),
                        Ort.spin(),
                        loMin,
                        loMax,
                        EmbedVsLangchain4j.cpu());
            }
        }
        System.exit(0);
    }

    /** The runs ONNX Runtime makes of the pairs in a variant (pair indices, each run padded to its longest). */
    static List<int[]> groups(String variant, TokenizedTexts t) {
        int n = t.size();
        return switch (variant) {
            case "padded" -> List.of(range(0, n));
            case "plan" -> RerankBenchAccess.raggedBatches(t);
            case "each" -> {
                List<int[]> out = new ArrayList<>();
                for (int i = 0; i < n; i++) out.add(new int[] {i});
                yield out;
            }
            case "sorted" -> {
                Integer[] order = new Integer[n];
                for (int i = 0; i < n; i++) order[i] = i;
                Arrays.sort(order, Comparator.comparingInt(t::tokens));
                List<int[]> out = new ArrayList<>();
                for (int s = 0; s < n; s += SORTED_BATCH)
                    out.add(Arrays.stream(order, s, Math.min(n, s + SORTED_BATCH))
                            .mapToInt(Integer::intValue)
                            .toArray());
                yield out;
            }
            default -> throw new IllegalArgumentException(variant);
        };
    }

    private static int[] range(int from, int to) {
        int[] r = new int[to - from];
        for (int i = 0; i < r.length; i++) r[i] = from + i;
        return r;
    }

    /** attn's ids and token types against transformers' (expected.json), when it is there and the passages its. */
    private static String checkIds(Path folder, TokenizedTexts pairs, List<String> passages, boolean defaults)
            throws IOException {
        Path f = folder.resolve("expected.json");
        if (!defaults || !Files.exists(f)) return "token ids not checked (no expected.json for these passages)";
        JsonObject e = JsonParser.parseString(Files.readString(f)).getAsJsonObject();
        JsonArray items = e.getAsJsonArray("items");
        if (!e.get("query").getAsString().equals(QUERY) || items.size() != passages.size())
            throw new IllegalStateException(f + " was written for other pairs: rerun tools/make_rerank_bench.py");
        for (int i = 0; i < items.size(); i++) {
            JsonObject it = items.get(i).getAsJsonObject();
            if (!Arrays.equals(ints(it.getAsJsonArray("input_ids")), RerankBenchAccess.ids(pairs, i))
                    || !Arrays.equals(ints(it.getAsJsonArray("token_type_ids")), RerankBenchAccess.types(pairs, i)))
                throw new IllegalStateException("pair " + i + ": attn's token ids or types differ from transformers'");
        }
        return "token ids and types of all " + items.size() + " pairs equal transformers'";
    }

    private static String checkCrossEncoder(Path folder, float[] mine, boolean defaults) throws IOException {
        Path f = folder.resolve("expected.json");
        if (!defaults || !Files.exists(f)) return "not checked against CrossEncoder";
        JsonArray raw =
                JsonParser.parseString(Files.readString(f)).getAsJsonObject().getAsJsonArray("raw_scores");
        double max = 0;
        for (int i = 0; i < mine.length; i++)
            max = Math.max(max, Math.abs(mine[i] - raw.get(i).getAsDouble()));
        if (!(max <= TOLERANCE))
            throw new IllegalStateException("attn's logits differ from CrossEncoder.predict's by " + max);
        return String.format(Locale.ROOT, "max |logit attn - CrossEncoder| %.2g", max);
    }

    private static int[] ints(JsonArray a) {
        int[] r = new int[a.size()];
        for (int i = 0; i < r.length; i++) r[i] = a.get(i).getAsInt();
        return r;
    }

    /** ONNX Runtime's side: int64 input_ids, attention_mask, token_type_ids padded with 0; logits [batch, 1]. */
    static final class Ort implements AutoCloseable {
        final OrtEnvironment env = OrtEnvironment.getEnvironment();
        final OrtSession session;

        static boolean spin() {
            return Boolean.getBoolean("ort.spin");
        }

        Ort(Path onnx, int threads) throws OrtException {
            OrtSession.SessionOptions o = new OrtSession.SessionOptions();
            o.setIntraOpNumThreads(threads);
            o.setInterOpNumThreads(1);
            if (!spin()) o.addConfigEntry("session.intra_op.allow_spinning", "0");
            o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            this.session = env.createSession(onnx.toString(), o);
        }

        /** The tokens (padding included) the runs feed ONNX Runtime. */
        static long fed(TokenizedTexts t, List<int[]> groups) {
            long n = 0;
            for (int[] g : groups) {
                int longest = 0;
                for (int i : g) longest = Math.max(longest, t.tokens(i));
                n += (long) longest * g.length;
            }
            return n;
        }

        float[] score(TokenizedTexts t, List<int[]> groups) {
            float[] out = new float[t.size()];
            try {
                for (int[] g : groups) run(t, g, out);
            } catch (OrtException e) {
                throw new IllegalStateException(e);
            }
            return out;
        }

        private void run(TokenizedTexts t, int[] group, float[] out) throws OrtException {
            int b = group.length, len = 0;
            for (int i : group) len = Math.max(len, t.tokens(i));
            long[] ids = new long[b * len], mask = new long[b * len], types = new long[b * len];
            for (int r = 0; r < b; r++) {
                int[] id = RerankBenchAccess.ids(t, group[r]), ty = RerankBenchAccess.types(t, group[r]);
                for (int j = 0; j < id.length; j++) {
                    ids[r * len + j] = id[j];
                    mask[r * len + j] = 1;
                    if (ty != null) types[r * len + j] = ty[j];
                }
            }
            long[] shape = {b, len};
            try (OnnxTensor inIds = OnnxTensor.createTensor(env, LongBuffer.wrap(ids), shape);
                    OnnxTensor inMask = OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape);
                    OnnxTensor inTypes = OnnxTensor.createTensor(env, LongBuffer.wrap(types), shape);
                    OrtSession.Result res = session.run(
                            Map.of("input_ids", inIds, "attention_mask", inMask, "token_type_ids", inTypes))) {
                FloatBuffer y = ((OnnxTensor) res.get(0)).getFloatBuffer();
                for (int r = 0; r < b; r++) out[group[r]] = y.get(r);
            }
        }

        @Override
        public void close() throws OrtException {
            session.close();
        }
    }

    private static double loadAverage() {
        try {
            return Double.parseDouble(
                    Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    private static double rate(Supplier<float[]> call, int pairs, double seconds) {
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        int n = 0;
        do {
            call.get();
            n++;
        } while (System.nanoTime() < end);
        return (double) n * pairs / ((System.nanoTime() - start) / 1e9);
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static List<String> readResource(String name) throws IOException {
        try (InputStream in = RerankVsOnnxRuntime.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException(name + " not on the class path");
            return new ArrayList<>(new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .toList());
        }
    }
}
