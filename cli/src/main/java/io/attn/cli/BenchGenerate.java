package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.Generation;
import io.attn.engine.GenerationOptions;
import io.attn.engine.LanguageModel;
import io.attn.engine.Quantization;
import io.attn.io.Json;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn bench generate}: greedy generation with a random decoder-only LM, with the KV cache and without it (every
 * step recomputes the whole sequence), reporting tokens/s of each and their ratio; the last line is JSON. Each mode
 * runs after warm-up generations of the same prompts ({@code --warmup} seconds); the cached mode {@code --rounds}
 * times, its median reported (the uncached run, long enough to average itself, once).
 */
@Command(name = "generate", description = "Tokens/s of decoder-only generation with and without the KV cache.")
final class BenchGenerate implements Callable<Integer> {
    @Option(names = "--prompt-len", description = "Default: ${DEFAULT-VALUE}.")
    int promptLen = 512;

    @Option(names = "--new-tokens", description = "Default: ${DEFAULT-VALUE}.")
    int newTokens = 512;

    @Option(names = "--batch", description = "Default: ${DEFAULT-VALUE}.")
    int batch = 1;

    @Option(names = "--d-model", description = "Default: ${DEFAULT-VALUE}.")
    int dModel = 512;

    @Option(names = "--heads", description = "Default: ${DEFAULT-VALUE}.")
    int heads = 8;

    @Option(names = "--layers", description = "Default: ${DEFAULT-VALUE}.")
    int layers = 6;

    @Option(names = "--ffn", description = "Default: ${DEFAULT-VALUE}.")
    int ffn = 2048;

    @Option(names = "--vocab", description = "Default: ${DEFAULT-VALUE}.")
    int vocab = 1000;

    @Option(names = "--mode", description = "both, cache or no-cache (default: ${DEFAULT-VALUE}).")
    String mode = "both";

    @Option(
            names = "--int8",
            description = "Quantize the random model as attn quantize does (int8 weights, activations per token).")
    boolean int8;

    @Option(names = "--per-channel", description = "With --int8: one scale per output.")
    boolean perChannel;

    @Option(
            names = "--warmup",
            paramLabel = "S",
            description = "Seconds of warm-up generations before measuring (default: ${DEFAULT-VALUE}).")
    double warmup = 5;

    @Option(
            names = "--rounds",
            paramLabel = "N",
            description = "Measured runs with the cache; the median is reported (default: ${DEFAULT-VALUE}; the"
                    + " no-cache run, long enough to average itself, runs once).")
    int rounds = 3;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        if (perChannel && !int8) throw AttnException.badInput("--per-channel applies with --int8 only");
        if (!(warmup >= 0 && warmup <= 600)) throw AttnException.badInput("--warmup must be 0 to 600 s, not " + warmup);
        if (rounds < 1 || rounds > 100) throw AttnException.badInput("--rounds must be 1 to 100, not " + rounds);
        SplittableRandom r = new SplittableRandom(9);
        int maxLen = promptLen + newTokens;
        String config = String.format(
                Locale.ROOT,
                "{\"module\":\"DecoderOnlyLM\",\"vocab_size\":%d,\"d_model\":%d,\"nhead\":%d,\"num_layers\":%d,"
                        + "\"dim_feedforward\":%d,\"max_len\":%d,\"positional\":\"sinusoidal\",\"norm_first\":true,"
                        + "\"activation\":\"gelu\",\"tied_embeddings\":true,\"final_norm\":true,\"layer_norm_eps\":1e-5,"
                        + "\"bias\":true}",
                vocab,
                dModel,
                heads,
                layers,
                ffn,
                maxLen);
        Map<String, Tensor> sd = new LinkedHashMap<>();
        sd.put("embed.weight", random(r, 1, vocab, dModel));
        float a = (float) (1 / Math.sqrt(dModel));
        for (int i = 0; i < layers; i++) {
            String p = "layers." + i + ".";
            sd.put(p + "self_attn.in_proj_weight", random(r, a, 3 * dModel, dModel));
            sd.put(p + "self_attn.in_proj_bias", random(r, 0.1f, 3 * dModel));
            sd.put(p + "self_attn.out_proj.weight", random(r, a, dModel, dModel));
            sd.put(p + "self_attn.out_proj.bias", random(r, 0.1f, dModel));
            sd.put(p + "linear1.weight", random(r, a, ffn, dModel));
            sd.put(p + "linear1.bias", random(r, 0.1f, ffn));
            sd.put(p + "linear2.weight", random(r, (float) (1 / Math.sqrt(ffn)), dModel, ffn));
            sd.put(p + "linear2.bias", random(r, 0.1f, dModel));
            for (String n : new String[] {"norm1.", "norm2."}) {
                sd.put(p + n + "weight", Tensor.of(ones(dModel), dModel));
                sd.put(p + n + "bias", Tensor.zeros(dModel));
            }
        }
        sd.put("norm.weight", Tensor.of(ones(dModel), dModel));
        sd.put("norm.bias", Tensor.zeros(dModel));
        int[][] prompts = new int[batch][promptLen];
        for (int[] p : prompts) for (int i = 0; i < p.length; i++) p[i] = r.nextInt(vocab);
        if (int8) {
            var q = Quantization.decoderOnlyLM(
                    Json.parseObject(config, "bench config"),
                    sd,
                    new Quantization.Options(perChannel, false),
                    "bench model");
            config = Json.write(q.config());
            sd = new LinkedHashMap<>(q.weights());
        }
        String shape = String.format(
                "B=%d prompt=%d new=%d E=%d H=%d layers=%d F=%d V=%d%s",
                batch,
                promptLen,
                newTokens,
                dModel,
                heads,
                layers,
                ffn,
                vocab,
                int8 ? (perChannel ? " int8 per channel" : " int8") : "");
        double cached = Double.NaN, uncached = Double.NaN;
        String deviceName;
        try (Engine engine = device.open();
                LanguageModel lm = engine.loadLanguageModel(config, sd)) {
            sd.clear(); // the engine holds its copy
            deviceName = engine.device();
            System.out.printf(Locale.ROOT, "bench generate %s on %s%n", shape, engine.description());
            // warm-up: the same generation (the same prompts, lengths and graphs; both paths: JIT, thread pool,
            // buffer pools), for --warmup seconds, 3 times at least. On 2 cores the JIT takes seconds to reach the
            // decoding loop's steady state: after one 4-token generation a 32 + 128-token run measured 165 tokens/s
            // (and a 101 ms prefill), warm 380 (10 ms); after 5 s of shorter generations the first run at the new
            // length was still at 161
            GenerationOptions greedy = GenerationOptions.defaults();
            long warmUntil = System.nanoTime() + (long) (warmup * 1e9);
            for (int i = 0; i < 3 || System.nanoTime() < warmUntil; i++) {
                lm.generate(prompts, greedy.withMaxNewTokens(newTokens), null);
                if (!mode.equals("cache"))
                    lm.generate(prompts, greedy.withMaxNewTokens(2).withCache(false), null);
            }
            if (!mode.equals("no-cache")) {
                double[] rates = new double[rounds];
                for (int i = 0; i < rounds; i++) rates[i] = run(lm, prompts, true);
                java.util.Arrays.sort(rates);
                cached = rates[rounds / 2]; // the median (rounds odd) or the upper middle
            }
            if (!mode.equals("cache")) uncached = run(lm, prompts, false);
        }
        boolean both = !Double.isNaN(cached) && !Double.isNaN(uncached);
        if (both) System.out.printf(Locale.ROOT, "  speed-up of the cache: %.1fx%n", cached / uncached);
        System.out.printf(
                Locale.ROOT,
                "{\"bench\":\"generate\",\"device\":\"%s\",\"threads\":%d,\"cached_tokens_per_s\":%s,"
                        + "\"uncached_tokens_per_s\":%s,\"speedup\":%s,\"shape\":\"%s\"}%n",
                deviceName,
                BenchCommand.threadsOf(device),
                json(cached),
                json(uncached),
                both ? json(cached / uncached) : "null",
                shape);
        return 0;
    }

    private double run(LanguageModel lm, int[][] prompts, boolean cache) {
        Generation res = lm.generate(
                prompts,
                GenerationOptions.defaults().withMaxNewTokens(newTokens).withCache(cache),
                null);
        System.out.printf(
                Locale.ROOT,
                "  %-8s %d tokens in %.2f s: %.2f tokens/s (prefill %.1f ms, then %.2f tokens/s)%n",
                cache ? "cache" : "no cache",
                res.generated(),
                res.totalNanos() / 1e9,
                res.tokensPerSecond(),
                res.prefillNanos() / 1e6,
                res.decodeTokensPerSecond());
        return res.tokensPerSecond();
    }

    private static Tensor random(SplittableRandom r, float scale, int... dims) {
        Tensor t = Tensor.zeros(dims);
        float[] d = t.data();
        for (int i = 0; i < d.length; i++) d[i] = (float) ((2 * r.nextDouble() - 1) * scale);
        return t;
    }

    private static String json(double v) {
        return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
    }

    private static float[] ones(int n) {
        float[] f = new float[n];
        java.util.Arrays.fill(f, 1f);
        return f;
    }
}
