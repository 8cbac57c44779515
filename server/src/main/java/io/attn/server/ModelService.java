package io.attn.server;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.Request;
import io.attn.engine.Result;
import io.attn.engine.Tensors;
import io.attn.tensor.Tensor;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.TextModel;
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
    final String name;
    final Embedder embedder; // null for a tensor model
    final AttnModel tensorModel; // null for a text model
    /** Whether the model lists a Normalize module: OpenAI's endpoint then returns unit vectors. */
    final boolean normalizes;

    private ModelService(String name, Embedder embedder, AttnModel tensorModel, boolean normalizes) {
        this.name = name;
        this.embedder = embedder;
        this.tensorModel = tensorModel;
        this.normalizes = normalizes;
    }

    /**
     * Loads {@code path}: a {@code .safetensors} file is an engine tensor model, anything else a text model.
     *
     * @throws AttnException naming the file and the problem
     */
    static ModelService load(Engine engine, Path path, EmbedderOptions options, int maxBatchTokens) {
        String file = path.getFileName() == null
                ? path.toString()
                : path.getFileName().toString();
        if (Files.isRegularFile(path) && file.toLowerCase(Locale.ROOT).endsWith(".safetensors")) {
            AttnModel m = engine.load(path);
            return new ModelService(file.substring(0, file.length() - ".safetensors".length()), null, m, false);
        }
        TextModel t = TextModel.read(path, options.tokenizer());
        boolean normalizes = options.normalize() != null ? options.normalize() : t.normalize();
        EmbedderOptions o = options.withNormalize(false)
                .withMaxBatchTokens(
                        Math.max(maxBatchTokens, options.maxLength() > 0 ? options.maxLength() : t.maxLength()))
                .withMaxBatchSize(Integer.MAX_VALUE);
        return new ModelService(t.name(), Embedder.load(engine, t, o), null, normalizes);
    }

    boolean isText() {
        return embedder != null;
    }

    /** One short pass through the model, so that the first request does not pay for compilation and packing. */
    void warmUp() {
        if (isText()) embedder.embed(List.of("warm up the model"));
        else {
            int e = tensorModel.width();
            tensorModel.run(Request.of(Tensors.of(new float[2 * e], 2, e)));
        }
    }

    int dimension() {
        return isText() ? embedder.dimension() : tensorModel.width();
    }

    TokenizedTexts tokenize(List<String> texts) {
        return tokenize(texts, null);
    }

    /** The texts after the model's prompt {@code promptName} (null: its default prompt); a bad one is a 400. */
    TokenizedTexts tokenize(List<String> texts, String promptName) {
        if (promptName != null && !embedder.prompts().byName().containsKey(promptName))
            throw ApiError.badRequest(
                    "invalid_value",
                    "prompt_name: \"" + promptName + "\" is not one of this model's prompts "
                            + embedder.prompts().byName().keySet());
        try {
            return embedder.tokenize(texts, promptName);
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
        return isText()
                ? Map.of(
                        "model",
                        name,
                        "kind",
                        "text",
                        "dimensions",
                        dimension(),
                        "max_input_tokens",
                        embedder.maxLength(),
                        "pooling",
                        embedder.pooling().label(),
                        "normalize",
                        normalizes)
                : Map.of(
                        "model",
                        name,
                        "kind",
                        "tensor",
                        "dimensions",
                        dimension(),
                        "module",
                        tensorModel.kind().toString());
    }

    @Override
    public void close() {
        if (embedder != null) embedder.close();
        if (tensorModel != null) tensorModel.close();
    }
}
