package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.Generation;
import io.attn.engine.GenerationOptions;
import io.attn.engine.LanguageModel;
import io.attn.engine.TokenListener;
import io.attn.engine.WordTokenizer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn generate}: text generation with a decoder-only LM ({@code "module":"DecoderOnlyLM"}) and a word-level
 * vocabulary. The prompt is {@code <bos>} plus its words; the model prefills it in one pass, then produces one token per
 * step against its key/value cache, until {@code <eos>} or {@code --max-new-tokens}. Tokens go to stdout as words
 * separated by single spaces, streamed as they are produced (one prompt) or one line per prompt (several); the
 * throughput goes to stderr.
 */
@Command(
        name = "generate",
        description = "Generate text with a decoder-only language model (KV-cached incremental decoding).")
final class GenerateCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "M.safetensors", description = "Weights (state_dict).")
    Path model;

    @Option(
            names = "--config",
            paramLabel = "C.json",
            description = "Config JSON (default: the \"config\" entry of the safetensors metadata).")
    Path config;

    @Option(names = "--vocab", required = true, paramLabel = "V.txt", description = "Vocabulary, one token per line.")
    Path vocab;

    @Option(
            names = "--prompt",
            required = true,
            paramLabel = "TEXT",
            description = "Prompt; repeat for a batch of prompts (of any lengths).")
    List<String> prompts;

    @Option(names = "--max-new-tokens", paramLabel = "N", description = "Default: ${DEFAULT-VALUE}.")
    int maxNewTokens = 32;

    @Option(names = "--temperature", paramLabel = "T", description = "0 = greedy (default: ${DEFAULT-VALUE}).")
    double temperature = 1.0;

    @Option(names = "--top-k", paramLabel = "K", description = "Sample among the K most likely tokens; 0 = all.")
    int topK = 0;

    @Option(names = "--top-p", paramLabel = "P", description = "Nucleus sampling mass (default: ${DEFAULT-VALUE}).")
    double topP = 1.0;

    @Option(names = "--seed", paramLabel = "S", description = "Random seed (default: a fresh one, printed).")
    Long seed;

    @Option(names = "--no-cache", description = "Recompute the whole sequence every step (for comparison).")
    boolean noCache;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() {
        if (!(temperature >= 0) || Double.isInfinite(temperature))
            throw AttnException.badInput("--temperature must be >= 0, got " + temperature);
        if (topK < 0) throw AttnException.badInput("--top-k must be >= 0, got " + topK);
        if (!(topP > 0 && topP <= 1)) throw AttnException.badInput("--top-p must be in (0, 1], got " + topP);
        if (maxNewTokens < 0) throw AttnException.badInput("--max-new-tokens must be >= 0, got " + maxNewTokens);
        WordTokenizer tok = WordTokenizer.read(vocab);
        int[][] ids = new int[prompts.size()][];
        for (int i = 0; i < ids.length; i++) ids[i] = tok.encodeWithBos(prompts.get(i));
        long s = seed != null ? seed : System.nanoTime();
        GenerationOptions options =
                new GenerationOptions(maxNewTokens, temperature, topK, topP, s, tok.eos(), !noCache);
        PrintStream out = System.out;
        boolean stream = ids.length == 1;
        int[] printed = new int[1];
        TokenListener listener = stream
                ? (seq, id) -> {
                    if (id == tok.eos()) return;
                    out.print((printed[0]++ == 0 ? "" : " ") + tok.token(id));
                    out.flush();
                }
                : null;
        Generation r;
        String description;
        try (Engine engine = device.open();
                LanguageModel lm = engine.loadLanguageModel(model, config)) {
            if (tok.vocabSize() != lm.vocabSize())
                throw AttnException.badInput(
                        vocab + " has " + tok.vocabSize() + " tokens but the model's vocab_size is " + lm.vocabSize());
            description = engine.description();
            r = lm.generate(ids, options, listener);
        }
        if (stream) out.println();
        else for (int[] t : r.tokens()) out.println(tok.decode(t));
        out.flush();
        int prompt = 0;
        for (int[] p : ids) prompt += p.length;
        System.err.printf(
                Locale.ROOT,
                "attn: %d tokens in %.3f s, %.1f tokens/s (decoding %.1f tokens/s; prompt %d tokens, prefill %.1f ms; %s;"
                        + " seed %d) on %s%n",
                r.generated(),
                r.totalNanos() / 1e9,
                r.tokensPerSecond(),
                r.decodeTokensPerSecond(),
                prompt,
                r.prefillNanos() / 1e6,
                noCache ? "no cache" : "KV cache",
                s,
                description);
        return 0;
    }
}
