package io.attn.cli;

import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn demo}: the tutorials' pipeline on a sentence. Tokenise (sorted-vocabulary ids, as seed 001), embed with
 * a seeded {@code nn.Embedding}, add the sinusoidal positional encoding, then multi-head self-attention with seeded
 * weights, unmasked and causal, printing the attention weights with the tokens as labels. The embedding and the
 * encoding are a table lookup and a sum, done here; the attention is a {@code MultiheadAttention} model on the engine
 * ({@link AttnModel#selfAttention}).
 */
@Command(
        name = "demo",
        description = "Embed a sentence and print its multi-head self-attention weights (unmasked and causal).")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--text", description = "Sentence to attend over (default: \"${DEFAULT-VALUE}\").")
    String text = "The sky is blue and world is round";

    @Option(names = "--d-model", description = "Embedding width (default: ${DEFAULT-VALUE}).")
    int dModel = 32;

    @Option(names = "--heads", description = "Attention heads (default: ${DEFAULT-VALUE}).")
    int heads = 4;

    @Option(names = "--seed", description = "Seed for the embedding and attention weights (default: ${DEFAULT-VALUE}).")
    long seed = 42;

    @Option(names = "--per-head", description = "Also print each head's weights.")
    boolean perHead;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        long t0 = System.nanoTime();
        List<String> tokens = tokenize(text);
        if (tokens.isEmpty()) throw io.attn.AttnException.badInput("--text has no words");
        try (Engine engine = device.open()) { // before any output: a bad --device fails cleanly
            return demo(engine, tokens, t0);
        }
    }

    private int demo(Engine engine, List<String> tokens, long t0) {
        List<String> vocab = new ArrayList<>(new TreeSet<>(tokens));
        int n = tokens.size();
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) ids[i] = vocab.indexOf(tokens.get(i));
        System.out.println("tokens: " + tokens);
        System.out.println("ids:    " + Arrays.toString(ids) + "   (index in the sorted vocabulary " + vocab + ")");

        SplittableRandom rnd = new SplittableRandom(seed);
        Tensor embed = normal(rnd, vocab.size(), dModel); // nn.Embedding init: N(0, 1)
        Map<String, Tensor> sd = new LinkedHashMap<>();
        float a = (float) Math.sqrt(6.0 / (dModel + 3 * dModel)); // xavier_uniform_ on in_proj_weight (3E, E)
        sd.put("in_proj_weight", uniform(rnd, a, 3 * dModel, dModel));
        sd.put("in_proj_bias", Tensor.zeros(3 * dModel));
        float b = (float) (1 / Math.sqrt(dModel)); // nn.Linear default init bound
        sd.put("out_proj.weight", uniform(rnd, b, dModel, dModel));
        sd.put("out_proj.bias", Tensor.zeros(dModel));
        String config = String.format(
                Locale.ROOT,
                "{\"module\":\"MultiheadAttention\",\"embed_dim\":%d,\"num_heads\":%d,\"batch_first\":true}",
                dModel,
                heads);

        // x = embed(ids) + PE: (1, L, E)
        float[] x = new float[n * dModel];
        for (int l = 0; l < n; l++) {
            float[] pe = positionalEncoding(l, dModel);
            for (int c = 0; c < dModel; c++) x[l * dModel + c] = embed.data()[ids[l] * dModel + c] + pe[c];
        }
        Tensor input = Tensor.of(x, 1, n, dModel);

        System.out.println("device: " + engine.description());
        System.out.printf(
                "model:  Embedding(%d, %d) + sinusoidal positional encoding + MultiheadAttention(embed_dim=%d, num_heads=%d), seed %d%n",
                vocab.size(), dModel, dModel, heads, seed);
        try (AttnModel mha = engine.load(config, sd, "demo")) {
            for (boolean causal : new boolean[] {false, true}) {
                Tensor w = mha.selfAttention(
                                input, causal, perHead ? AttentionWeights.PER_HEAD : AttentionWeights.AVERAGED)
                        .attentionWeights("attn");
                String title = causal ? "causal (masked) self-attention" : "self-attention";
                if (perHead) {
                    for (int h = 0; h < heads; h++) printTable(title + ", head " + h, tokens, w.data(), h * n * n);
                    printTable(title + ", averaged over heads", tokens, average(w, heads, n), 0);
                } else printTable(title + ", weights averaged over " + heads + " heads", tokens, w.data(), 0);
            }
        }
        System.out.printf(
                "rows: query tokens; columns: key tokens; each row sums to 1. (%.0f ms)%n",
                (System.nanoTime() - t0) / 1e6);
        return 0;
    }

    /**
     * Row {@code pos} of the sinusoidal positional encoding of "Attention Is All You Need" (as the engine and the
     * PyTorch tutorials compute it): {@code PE[pos, 2i] = sin(pos w_i)}, {@code PE[pos, 2i+1] = cos(pos w_i)}, {@code
     * w_i = exp(-ln(10000) 2i / E)}, in double, rounded to float.
     */
    static float[] positionalEncoding(int pos, int e) {
        float[] pe = new float[e];
        for (int i = 0; 2 * i < e; i++) {
            double angle = pos * Math.exp(-Math.log(10000.0) * (2.0 * i) / e);
            pe[2 * i] = (float) Math.sin(angle);
            if (2 * i + 1 < e) pe[2 * i + 1] = (float) Math.cos(angle);
        }
        return pe;
    }

    /** The tutorial's tokenisation: drop {@code ,';#$@&)(} and split on whitespace. */
    static List<String> tokenize(String s) {
        String cleaned = s.replaceAll("[,';#$@&)(]", "");
        List<String> out = new ArrayList<>();
        for (String w : cleaned.trim().split("\\s+")) if (!w.isEmpty()) out.add(w);
        return out;
    }

    private static float[] average(Tensor perHead, int heads, int l) {
        float[] avg = new float[l * l];
        for (int h = 0; h < heads; h++) for (int i = 0; i < l * l; i++) avg[i] += perHead.data()[h * l * l + i] / heads;
        return avg;
    }

    static void printTable(String title, List<String> tokens, float[] w, int off) {
        int n = tokens.size();
        int width = 7;
        for (String t : tokens) width = Math.max(width, Math.min(t.length(), 12) + 1);
        System.out.println();
        System.out.println(title + ":");
        StringBuilder sb = new StringBuilder(String.format("%" + width + "s", ""));
        for (String t : tokens) sb.append(String.format("%" + width + "s", clip(t)));
        System.out.println(sb);
        for (int i = 0; i < n; i++) {
            sb = new StringBuilder(String.format("%-" + width + "s", clip(tokens.get(i))));
            for (int j = 0; j < n; j++) sb.append(String.format("%" + width + ".4f", w[off + i * n + j]));
            System.out.println(sb);
        }
    }

    private static String clip(String t) {
        return t.length() > 12 ? t.substring(0, 11) + "~" : t;
    }

    private static Tensor normal(SplittableRandom r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) { // Box-Muller
            double u = 1 - r.nextDouble(), v = r.nextDouble();
            d[i] = (float) (Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
        }
        return t;
    }

    private static Tensor uniform(SplittableRandom r, float bound, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) ((2 * r.nextDouble() - 1) * bound);
        return t;
    }
}
