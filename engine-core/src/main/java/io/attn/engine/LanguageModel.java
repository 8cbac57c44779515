package io.attn.engine;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.generate.Sampler;
import io.attn.nn.DecoderOnlyLM;
import java.util.Map;

/**
 * A decoder-only (GPT-style) language model loaded into an {@link Engine} ({@code "module":"DecoderOnlyLM"}: token
 * embedding plus positions, causal self-attention layers with {@code nn.TransformerEncoderLayer} weights, an optional
 * final LayerNorm, a projection to the vocabulary): {@link #generate} continues prompts of token ids.
 *
 * <pre>{@code
 * try (Engine engine = Engine.open();
 *         LanguageModel lm = engine.loadLanguageModel(Path.of("tiny-lm.safetensors"), null)) {
 *     Generation g = lm.generate(new int[][] {{1, 57, 57}}, GenerationOptions.defaults().withEos(2), null);
 *     int[] continuation = g.tokens()[0];
 * }
 * }</pre>
 *
 * <p>A batch of prompts of different lengths is prefilled in one pass, then one token per sequence is picked and fed
 * back per step against a key/value cache that stays on the device, until every sequence has produced the end token or
 * {@link GenerationOptions#maxNewTokens}; each sequence gets the tokens it would get alone.
 *
 * <p>Thread-safe: {@link #generate} may be called from many threads at once (each call has its own cache; the weights
 * are shared and never change). A failing call throws {@link AttnException} to its caller only and leaves the model
 * usable. {@link #close} waits for the calls in flight; it is idempotent; any call after it throws {@link
 * IllegalStateException}. Closing the engine closes its language models.
 */
public final class LanguageModel implements AutoCloseable {
    private final Engine engine;
    private final Backend backend;
    private final DecoderOnlyLM lm;
    private final Gate gate = new Gate("language model");

    LanguageModel(Engine engine, Backend backend, DecoderOnlyLM lm) {
        this.engine = engine;
        this.backend = backend;
        this.lm = lm;
    }

    /** The number of token ids: every id is in {@code [0, vocabSize())}. */
    public int vocabSize() {
        return lm.config().vocabSize();
    }

    /**
     * The model's {@code max_len}: a prompt plus its new tokens, less one (the last token is never fed back), must fit
     * in it.
     */
    public int maxLength() {
        return lm.config().maxLen();
    }

    /** The configuration: {@code "module"} and every constructor argument, defaults filled in. */
    public Map<String, Object> config() {
        return lm.config().arguments();
    }

    /**
     * Continues each prompt (token ids, each non-empty; of any lengths).
     *
     * @param options how tokens are picked and when a sequence stops (null: {@link GenerationOptions#defaults()})
     * @param listener receives each token as it is produced (may be null)
     * @throws AttnException BAD_INPUT for no prompts, an empty prompt, an id outside the vocabulary, or a prompt plus
     *     {@code maxNewTokens} beyond {@link #maxLength()}; NON_FINITE when the model produces a non-finite logit
     */
    public Generation generate(int[][] prompts, GenerationOptions options, TokenListener listener) {
        if (options == null) options = GenerationOptions.defaults();
        checkPrompts(prompts, options);
        gate.enter();
        try {
            Sampler sampler = new Sampler(options.temperature(), options.topK(), options.topP(), options.seed());
            TokenListener l = listener == null
                    ? null
                    : (seq, id) -> {
                        try {
                            listener.token(seq, id);
                        } catch (RuntimeException e) {
                            throw new ListenerFailed(e);
                        }
                    };
            return Generator.generate(
                    lm, backend, prompts, options.maxNewTokens(), sampler, options.eos(), options.useCache(), l);
        } catch (ListenerFailed e) {
            throw (RuntimeException) e.getCause();
        } catch (RuntimeException | OutOfMemoryError e) {
            throw Failures.of(e, "generating");
        } finally {
            gate.exit();
        }
    }

    /** {@link #generate(int[][], GenerationOptions, TokenListener)} for one prompt: its new tokens. */
    public int[] generate(int[] prompt, GenerationOptions options) {
        if (prompt == null) throw AttnException.badInput("prompt is null");
        return generate(new int[][] {prompt}, options, null).tokens()[0];
    }

    private void checkPrompts(int[][] prompts, GenerationOptions options) {
        if (prompts == null || prompts.length == 0) throw AttnException.badInput("no prompts to continue");
        int v = vocabSize();
        for (int i = 0; i < prompts.length; i++) {
            int[] p = prompts[i];
            if (p == null || p.length == 0)
                throw AttnException.badInput("prompt " + i + " is empty: a prompt needs at least one token");
            for (int j = 0; j < p.length; j++)
                if (p[j] < 0 || p[j] >= v)
                    throw AttnException.badInput("prompt " + i + ": token id " + p[j] + " at position " + j
                            + " is outside the vocabulary of " + v);
        }
        if (options.eos() >= v)
            throw AttnException.badInput("eos id " + options.eos() + " is outside the vocabulary of " + v);
    }

    /** Whether {@link #close} has been called (directly or by closing the engine). */
    public boolean isClosed() {
        return gate.isClosed();
    }

    /** Waits for calls in flight, then forgets the model. Idempotent. */
    @Override
    public void close() {
        gate.close(() -> engine.forget(this));
    }

    /** Carries an exception of the caller's listener through the generator, to be rethrown unchanged. */
    private static final class ListenerFailed extends RuntimeException {
        ListenerFailed(RuntimeException cause) {
            super(cause);
        }
    }
}
