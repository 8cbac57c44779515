package io.attn.cli;

import io.attn.backend.Backend;
import io.attn.backend.Backends;
import io.attn.engine.AttentionWeights;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.nn.Embedding;
import io.attn.nn.Forward;
import io.attn.nn.Masks;
import io.attn.nn.MultiheadAttention;
import io.attn.nn.PositionalEncoding;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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
 * weights, unmasked and causal, printing the attention weights with the tokens as labels.
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
        Backends.Selection sel = device.open(); // before any output: a bad --device fails cleanly
        try (Backend backend = sel.backend()) {
            return demo(backend, sel, tokens, t0);
        }
    }

    private int demo(Backend backend, Backends.Selection sel, List<String> tokens, long t0) {
        List<String> vocab = new ArrayList<>(new TreeSet<>(tokens));
        float[] ids = new float[tokens.size()];
        for (int i = 0; i < ids.length; i++) ids[i] = vocab.indexOf(tokens.get(i));
        System.out.println("tokens: " + tokens);
        System.out.println("ids:    " + idsString(ids) + "   (index in the sorted vocabulary " + vocab + ")");

        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, Tensor> sd = new LinkedHashMap<>();
        sd.put("embed.weight", normal(rnd, vocab.size(), dModel)); // nn.Embedding init: N(0, 1)
        float a = (float) Math.sqrt(6.0 / (dModel + 3 * dModel)); // xavier_uniform_ on in_proj_weight (3E, E)
        sd.put("attn.in_proj_weight", uniform(rnd, a, 3 * dModel, dModel));
        sd.put("attn.in_proj_bias", Tensor.zeros(3 * dModel));
        float b = (float) (1 / Math.sqrt(dModel)); // nn.Linear default init bound
        sd.put("attn.out_proj.weight", uniform(rnd, b, dModel, dModel));
        sd.put("attn.out_proj.bias", Tensor.zeros(dModel));
        StateDict weights = new StateDict(sd, "demo");
        Embedding embed = Embedding.load(weights, "embed.", vocab.size(), dModel);
        MultiheadAttention mha = new MultiheadAttention(weights, "attn.", dModel, heads, true);

        System.out.println("device: " + sel.reason());
        System.out.printf(
                "model:  Embedding(%d, %d) + sinusoidal positional encoding + MultiheadAttention(embed_dim=%d, num_heads=%d), seed %d%n",
                vocab.size(), dModel, dModel, heads, seed);
        for (boolean causal : new boolean[] {false, true}) {
            GraphBuilder g = new GraphBuilder();
            Forward f = new Forward(g, perHead ? AttentionWeights.PER_HEAD : AttentionWeights.AVERAGED);
            Node x = PositionalEncoding.forward(f, embed.forward(f, g.input("ids", 1, ids.length)), 0);
            Node out = mha.forward(f, x, x, x, Masks.causal(causal));
            Node w = f.weightNodes().get("attn");
            try (Executor ex = new Executor(backend, g.build(out, w))) {
                List<Tensor> r = ex.run(Map.of("ids", Tensor.of(ids, 1, ids.length)));
                Tensor weightsT = r.get(1);
                String title = causal ? "causal (masked) self-attention" : "self-attention";
                if (perHead) {
                    for (int h = 0; h < heads; h++)
                        printTable(title + ", head " + h, tokens, weightsT.data(), h * tokens.size() * tokens.size());
                    printTable(title + ", averaged over heads", tokens, average(weightsT, heads, tokens.size()), 0);
                } else printTable(title + ", weights averaged over " + heads + " heads", tokens, weightsT.data(), 0);
            }
        }
        System.out.printf(
                "rows: query tokens; columns: key tokens; each row sums to 1. (%.0f ms)%n",
                (System.nanoTime() - t0) / 1e6);
        return 0;
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

    private static String idsString(float[] ids) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < ids.length; i++) sb.append(i == 0 ? "" : ", ").append((int) ids[i]);
        return sb.append(']').toString();
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
