package io.attn.server;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.Request;
import io.attn.engine.Result;
import io.attn.engine.Tensors;
import io.attn.tensor.Tensor;
import io.attn.text.Classifier;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.Reranker;
import io.attn.text.TextModel;
import io.attn.text.Token;
import io.attn.text.TokenizedTexts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The model a server runs, loaded once at start: a text model (a Hugging Face folder or a BERT-family {@code .onnx},
 * through an {@link Embedder} whose vectors are left unnormalized so that each endpoint normalizes as its API says) or
 * one of the engine's tensor models (a {@code .safetensors} export, through an {@link AttnModel}). Thread-safe.
 */
final class ModelService implements AutoCloseable {
    /** What a model serves: embeddings, reranking (a one-label cross-encoder), classification, tensors. */
    enum Kind {
        EMBED("embeddings: /v1/embeddings, /embed"),
        RERANK("reranking: /rerank, /v1/rerank"),
        CLASSIFY("classification: /predict"),
        TENSOR("tensors: /v1/encode");

        final String serves;

        Kind(String serves) {
            this.serves = serves;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    final String name;
    final Kind kind;
    final Embedder embedder; // EMBED only
    final Reranker reranker; // RERANK only
    final Classifier classifier; // CLASSIFY only
    final AttnModel tensorModel; // TENSOR only
    /** Whether the model lists a Normalize module: OpenAI's endpoint then returns unit vectors. */
    final boolean normalizes;
    /** Requests admitted for this model and not yet answered; more get 429 (this model only). */
    final java.util.concurrent.Semaphore admitted;

    final int maxQueued;
    private Batcher<?> batcher;

    private ModelService(
            String name,
            Kind kind,
            Embedder embedder,
            Reranker reranker,
            Classifier classifier,
            AttnModel tensorModel,
            boolean normalizes,
            int maxQueued) {
        this.name = name;
        this.kind = kind;
        this.embedder = embedder;
        this.reranker = reranker;
        this.classifier = classifier;
        this.tensorModel = tensorModel;
        this.normalizes = normalizes;
        this.maxQueued = maxQueued;
        this.admitted = new java.util.concurrent.Semaphore(maxQueued);
    }

    /** Starts this model's batcher (its own worker thread: each model batches on its own). */
    void startBatching(int maxBatchTokens, long maxWaitMillis, Metrics metrics) {
        batcher = switch (kind) {
            case EMBED -> new Batcher<>(Batcher.embeddings(embedder), name, maxBatchTokens, maxWaitMillis, metrics);
            case RERANK ->
                new Batcher<>(Batcher.logits(reranker::logits), name, maxBatchTokens, maxWaitMillis, metrics);
            case CLASSIFY ->
                new Batcher<>(Batcher.logits(classifier::logits), name, maxBatchTokens, maxWaitMillis, metrics);
            case TENSOR -> null;
        };
    }

    @SuppressWarnings("unchecked")
    Batcher<io.attn.text.Embeddings> embeddings() {
        return (Batcher<io.attn.text.Embeddings>) batcher;
    }

    @SuppressWarnings("unchecked")
    Batcher<float[][]> logits() {
        return (Batcher<float[][]>) batcher;
    }

    int admittedNow() {
        return maxQueued - admitted.availablePermits();
    }

    void stopBatching() {
        if (batcher != null) batcher.close();
    }

    /**
     * Loads {@code path}: a {@code .safetensors} file is an engine tensor model, anything else a text model.
     *
     * @throws AttnException naming the file and the problem
     */
    static ModelService load(
            Engine engine, String name, Path path, EmbedderOptions options, int maxBatchTokens, int maxQueued) {
        return load(engine, name, path, null, options, maxBatchTokens, maxQueued);
    }

    /** Like the above, with the text model already read ({@code read} non-null: its tasks' shared weights). */
    static ModelService load(
            Engine engine,
            String name,
            Path path,
            TextModel read,
            EmbedderOptions options,
            int maxBatchTokens,
            int maxQueued) {
        String file = path.getFileName() == null
                ? path.toString()
                : path.getFileName().toString();
        if (Files.isRegularFile(path) && file.toLowerCase(Locale.ROOT).endsWith(".safetensors")) {
            if (options.task() != null)
                throw AttnException.badInput(
                        path + ": task \"" + options.task() + "\" asked, but a tensor model"
                                + " holds no task adapters (they come in a text model folder's weights, as jina-embeddings-v3's)");
            AttnModel m = engine.load(path);
            return new ModelService(
                    name != null ? name : file.substring(0, file.length() - ".safetensors".length()),
                    Kind.TENSOR,
                    null,
                    null,
                    null,
                    m,
                    false,
                    maxQueued);
        }
        TextModel t =
                read != null ? read : TextModel.read(path, options.tokenizer(), options.task(), options.taskAdapters());
        String n = name != null ? name : t.name();
        if (t.isClassifier()) {
            EmbedderOptions o = options.withMaxBatchTokens(
                            Math.max(maxBatchTokens, options.maxLength() > 0 ? options.maxLength() : t.maxLength()))
                    .withMaxBatchSize(Integer.MAX_VALUE);
            if (t.labels().size() == 1)
                return new ModelService(
                        n, Kind.RERANK, null, Reranker.load(engine, t, o), null, null, false, maxQueued);
            return new ModelService(
                    n, Kind.CLASSIFY, null, null, Classifier.load(engine, t, o), null, false, maxQueued);
        }
        boolean normalizes = options.normalize() != null ? options.normalize() : t.normalize();
        EmbedderOptions o = options.withNormalize(false)
                .withMaxBatchTokens(
                        Math.max(maxBatchTokens, options.maxLength() > 0 ? options.maxLength() : t.maxLength()))
                .withMaxBatchSize(Integer.MAX_VALUE);
        return new ModelService(n, Kind.EMBED, Embedder.load(engine, t, o), null, null, null, normalizes, maxQueued);
    }

    boolean isText() {
        return kind != Kind.TENSOR;
    }

    /** The most tokens a text (or pair) may have. */
    int maxLength() {
        return switch (kind) {
            case EMBED -> embedder.maxLength();
            case RERANK -> reranker.maxLength();
            case CLASSIFY -> classifier.maxLength();
            case TENSOR -> 0;
        };
    }

    /**
     * One short pass through the model, so that the first request does not pay for packing; then, for {@code millis},
     * batches of assorted shapes (1 to 48 texts of 2 to 128 words), so that the JIT compiles the kernels with a profile
     * of the shapes traffic brings. Without it a fresh server's first batches of new shapes run deoptimized,
     * uncompiled Vector API code, seconds per batch on a busy machine (docs/server.md).
     */
    void warmUp(long millis) {
        if (kind == Kind.EMBED) embedder.embed(List.of("warm up the model"));
        else if (kind == Kind.RERANK) reranker.score("warm up", List.of("the model"));
        else if (kind == Kind.CLASSIFY) classifier.classify(List.of("warm up the model"));
        else {
            int e = tensorModel.width();
            tensorModel.run(Request.of(Tensors.of(new float[2 * e], 2, e)));
            return;
        }
        long until = System.nanoTime() + millis * 1_000_000L;
        java.util.Random r = new java.util.Random(36);
        String[] words =
                "the model reads every token of a sentence at once and attention lets each word look at all".split(" ");
        while (millis > 0 && System.nanoTime() < until) {
            int n = 1 + r.nextInt(48);
            List<String> texts = new java.util.ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                StringBuilder b = new StringBuilder();
                for (int w = 2 + r.nextInt(r.nextInt(8) == 0 ? 127 : 31); w > 0; w--)
                    b.append(words[r.nextInt(words.length)]).append(' ');
                texts.add(b.toString().strip());
            }
            if (kind == Kind.EMBED) embedder.embed(texts);
            else if (kind == Kind.RERANK) reranker.score(texts.get(0), texts);
            else classifier.classify(texts);
        }
    }

    int dimension() {
        return switch (kind) {
            case EMBED -> embedder.dimension();
            case RERANK -> 1;
            case CLASSIFY -> classifier.labels().size();
            case TENSOR -> tensorModel.width();
        };
    }

    /** Each text's tokens with their strings, whether special, and character offsets (TEI's /tokenize). */
    List<List<Token>> tokenDetails(List<String> texts, boolean addSpecial) {
        try {
            return switch (kind) {
                case EMBED -> embedder.tokenDetails(texts, addSpecial);
                case RERANK -> reranker.tokenDetails(texts, addSpecial);
                case CLASSIFY -> classifier.tokenDetails(texts, addSpecial);
                case TENSOR -> throw new IllegalStateException();
            };
        } catch (AttnException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage());
        }
    }

    /** The text of token ids (TEI's /decode). */
    String decode(int[] ids, boolean skipSpecial) {
        try {
            return switch (kind) {
                case EMBED -> embedder.decode(ids, skipSpecial);
                case RERANK -> reranker.decode(ids, skipSpecial);
                case CLASSIFY -> classifier.decode(ids, skipSpecial);
                case TENSOR -> throw new IllegalStateException();
            };
        } catch (AttnException | IllegalArgumentException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage());
        }
    }

    /** The texts after the model's prompt {@code promptName} (null: its default prompt); a bad one is a 400. */
    TokenizedTexts tokenize(List<String> texts, String promptName, boolean left) {
        if (promptName != null && !embedder.prompts().byName().containsKey(promptName))
            throw ApiError.badRequest(
                    "invalid_value",
                    "prompt_name: \"" + promptName + "\" is not one of this model's prompts "
                            + embedder.prompts().byName().keySet());
        try {
            return embedder.tokenize(texts, promptName, left);
        } catch (AttnException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage());
        }
    }

    /** A tensor model's forward pass; errors in the input are 400, device faults 503. */
    Result encode(Tensor input, Tensor keyPaddingMask, boolean causal, AttentionWeights weights) {
        try {
            return tensorModel.run(Request.of(input)
                    .withKeyPaddingMask(keyPaddingMask)
                    .withCausal(causal)
                    .withAttentionWeights(weights));
        } catch (AttnException e) {
            throw switch (e.code()) {
                case BAD_INPUT, SHAPE_MISMATCH, NON_FINITE -> ApiError.badRequest("invalid_input", e.getMessage());
                case DEVICE_UNAVAILABLE, DEVICE_OUT_OF_MEMORY -> ApiError.unavailable("device_error", e.getMessage());
                case INTERNAL -> new ApiError(500, "server_error", "internal_error", "internal error");
            };
        }
    }

    /** The vector, normalized when asked (a copy: the batch's arrays stay as they are). */
    static float[] maybeNormalized(float[] v, boolean normalize) {
        if (!normalize) return v;
        float[] c = v.clone();
        Embedder.normalize(c);
        return c;
    }

    Map<String, Object> info() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("model", name);
        m.put("model_type", kind.label());
        switch (kind) {
            case EMBED -> {
                m.put("kind", "text");
                m.put("dimensions", dimension());
                m.put("max_input_tokens", embedder.maxLength());
                m.put("pooling", embedder.pooling().label());
                m.put("normalize", normalizes);
            }
            case RERANK -> {
                m.put("kind", "text");
                m.put("max_input_tokens", reranker.maxLength());
                m.put("activation", reranker.activation());
            }
            case CLASSIFY -> {
                m.put("kind", "text");
                m.put("max_input_tokens", classifier.maxLength());
                m.put("activation", classifier.activation());
                m.put("labels", classifier.labels());
            }
            case TENSOR -> {
                m.put("kind", "tensor");
                m.put("dimensions", dimension());
                m.put("module", tensorModel.kind());
            }
        }
        return m;
    }

    @Override
    public void close() {
        stopBatching();
        if (embedder != null) embedder.close();
        if (reranker != null) reranker.close();
        if (classifier != null) classifier.close();
        if (tensorModel != null) tensorModel.close();
    }
}
