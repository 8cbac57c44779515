package io.attn.server;

import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Result;
import io.attn.engine.Tensors;
import io.attn.tensor.Tensor;
import io.attn.text.Embedder;
import io.attn.text.Embeddings;
import io.attn.text.Reranker;
import io.attn.text.Token;
import io.attn.text.TokenizedTexts;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP API over one or several models ({@link ModelService}, each with its own batcher and admission limit).
 * Requests are handled on virtual threads (blocking while a batch runs costs nothing). Endpoints:
 *
 * <ul>
 *   <li>{@code POST /v1/embeddings}: OpenAI's request and response ({@code input} a string or strings, {@code
 *       encoding_format} float|base64, {@code dimensions} up to the model's: the first ones, re-normalized when the
 *       model normalizes (Matryoshka), {@code model} picks the model, {@code user} accepted, Jina's {@code task}
 *       picks the model serving that task adapter (the named model's copy {@code NAME/TASK}, or without a {@code
 *       model} the first serving it); a task not served is 400); unit vectors when the model lists a
 *       Normalize module.
 *   <li>{@code POST /embed}: Hugging Face text-embeddings-inference's ({@code inputs}, {@code normalize} default true,
 *       {@code truncate} default false: a text over the maximum length is then 413, {@code truncation_direction}
 *       right|left, {@code prompt_name}); a JSON array of arrays.
 *   <li>{@code POST /rerank} (TEI: {@code query}, {@code texts}, {@code raw_scores}, {@code return_text}, {@code
 *       truncate}, {@code truncation_direction} right|left: {@code [{"index", "score"(, "text")}]} best first) and {@code POST
 *       /v1/rerank} (Cohere / Jina: {@code model}, {@code query}, {@code documents}, {@code top_n}, {@code
 *       return_documents}: {@code {"results": [{"index", "relevance_score"(, "document": {"text"})}]}}).
 *   <li>{@code POST /predict} (TEI: {@code inputs} a text, texts, or [a, b] pairs, {@code raw_scores}, {@code
 *       truncate}: {@code [{"label", "score"}]} per input, best first).
 *   <li>{@code POST /tokenize} ({@code inputs}, {@code add_special_tokens}) and {@code POST /decode} ({@code ids},
 *       {@code skip_special_tokens}), TEI's, for every text model.
 *   <li>{@code POST /v1/encode}: the engine's tensor models.
 *   <li>{@code GET /health}, {@code GET /info} ({@code ?model=NAME}; the first model by default, with the list of
 *       all), {@code GET /v1/models}, {@code GET /metrics} (Prometheus text, batch metrics by model).
 * </ul>
 *
 * Every body may name its {@code model}; without one the first model of the kind the endpoint needs answers. An
 * unknown name is a 404 naming the served ones; a model of the wrong kind (a reranker asked to embed...) a 400 naming
 * what it serves. Limits, each a 4xx JSON error: the API key (401), admitted requests per model (429 with
 * Retry-After: a model's overload is 429 for it alone), texts per request, tokens per text and per request (413), a
 * request's deadline (503). Thread-safe.
 */
final class ApiHandler extends Handler.Abstract {
    private static final Set<String> OPENAI = Set.of("input", "model", "encoding_format", "dimensions", "user", "task");
    private static final Set<String> TEI =
            Set.of("inputs", "normalize", "truncate", "truncation_direction", "prompt_name", "model");
    private static final Set<String> TEI_RERANK =
            Set.of("query", "texts", "raw_scores", "return_text", "truncate", "truncation_direction", "model");
    private static final Set<String> COHERE_RERANK =
            Set.of("model", "query", "documents", "top_n", "return_documents", "max_chunks_per_doc", "rank_fields");
    private static final Set<String> PREDICT =
            Set.of("inputs", "raw_scores", "truncate", "truncation_direction", "model");
    private static final Set<String> TOKENIZE = Set.of("inputs", "add_special_tokens", "prompt_name", "model");
    private static final Set<String> DECODE = Set.of("ids", "skip_special_tokens", "model");
    private static final Set<String> ENCODE =
            Set.of("shape", "data", "key_padding_mask", "causal", "attention_weights");

    private final Map<String, ModelService> models;
    private final ServerOptions options;
    private final Metrics metrics;
    private final Semaphore admitted;
    private final Drain drain;
    private final byte[] keyHash;
    private final String device, version;
    private volatile boolean ready, draining;

    ApiHandler(
            Map<String, ModelService> models,
            ServerOptions options,
            Metrics metrics,
            Semaphore admitted,
            Drain drain,
            String device,
            String version) {
        this.models = models;
        this.options = options;
        this.metrics = metrics;
        this.admitted = admitted;
        this.drain = drain;
        this.keyHash = options.apiKey() == null ? null : sha256(options.apiKey());
        this.device = device;
        this.version = version;
    }

    void ready() {
        ready = true;
    }

    void draining() {
        draining = true;
    }

    /** The model that answered the request being handled on this thread (for the metrics' label). */
    private static final ThreadLocal<String> PICKED = new ThreadLocal<>();

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        long start = System.nanoTime();
        String path = Request.getPathInContext(request), method = request.getMethod();
        String endpoint =
                switch (path) {
                    case "/v1/embeddings",
                            "/embed",
                            "/v1/encode",
                            "/rerank",
                            "/v1/rerank",
                            "/predict",
                            "/tokenize",
                            "/decode",
                            "/v1/models",
                            "/health",
                            "/info",
                            "/metrics" -> path;
                    default -> "other";
                };
        int status;
        drain.enter();
        PICKED.remove();
        try {
            if (draining) response.getHeaders().put(HttpHeader.CONNECTION, "close");
            cors(request, response);
            if (method.equals("OPTIONS") && options.corsOrigin() != null) {
                status = send(response, callback, 204, null, null);
            } else status = route(request, response, callback, path, method);
        } catch (ApiError e) {
            if (e.status == 429) response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            if (e.status == 401) response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
            // a refused (429, 401, 413, ...) or broken body is not read to its end: Jetty closes the connection after
            // the answer, which says so, so that a client does not send its next request on it
            if (BodyReader.unread(request) || e.code.equals("unreadable_body"))
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            status = send(response, callback, e.status, "application/json", e.json());
        } catch (OutOfMemoryError e) {
            ApiError err = ApiError.unavailable("out_of_memory", "out of memory; retry later");
            status = send(response, callback, 503, "application/json", err.json());
        } finally {
            drain.exit();
        }
        String picked = PICKED.get();
        PICKED.remove();
        metrics.requests
                .labelValues(endpoint, Integer.toString(status), picked == null ? "" : picked)
                .inc();
        metrics.latency.labelValues(endpoint).observe((System.nanoTime() - start) / 1e9);
        return true;
    }

    private int route(Request request, Response response, Callback callback, String path, String method) {
        switch (path) {
            case "/health" -> {
                requireMethod(method, "GET");
                boolean ok = ready && !draining;
                String s = ok ? "ok" : draining ? "draining" : "starting";
                return send(response, callback, ok ? 200 : 503, "application/json", "{\"status\":\"" + s + "\"}");
            }
            case "/info" -> {
                requireMethod(method, "GET");
                authorize(request);
                String name = Request.extractQueryParameters(request).getValue("model");
                return send(response, callback, 200, "application/json", info(name));
            }
            case "/v1/models" -> {
                requireMethod(method, "GET");
                authorize(request);
                return send(response, callback, 200, "application/json", modelList());
            }
            case "/metrics" -> {
                requireMethod(method, "GET");
                authorize(request);
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, metrics.contentType());
                response.write(true, ByteBuffer.wrap(metrics.scrape()), callback);
                return 200;
            }
            case "/v1/embeddings",
                    "/embed",
                    "/v1/encode",
                    "/rerank",
                    "/v1/rerank",
                    "/predict",
                    "/tokenize",
                    "/decode" -> {
                requireMethod(method, "POST");
                authorize(request);
                if (!drain.receivedBefore(request))
                    throw ApiError.unavailable("shutting_down", "the server is shutting down");
                if (!admitted.tryAcquire()) throw tooMany("the server");
                try {
                    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.requestTimeoutMillis());
                    byte[] body = BodyReader.read(request, options.maxBodyBytes(), options.minDataRate(), deadline);
                    String json =
                            switch (path) {
                                case "/v1/embeddings" -> openAi(body, deadline);
                                case "/embed" -> tei(body, deadline);
                                case "/rerank" -> teiRerank(body, deadline);
                                case "/v1/rerank" -> cohereRerank(body, deadline);
                                case "/predict" -> predict(body, deadline);
                                case "/tokenize" -> tokenize(body);
                                case "/decode" -> decode(body);
                                default -> encode(body);
                            };
                    return send(response, callback, 200, "application/json", json);
                } finally {
                    admitted.release();
                }
            }
            default -> throw new ApiError(404, "invalid_request_error", "not_found", "no such endpoint: " + path);
        }
    }

    private static ApiError tooMany(String who) {
        return new ApiError(
                429,
                "rate_limit_error",
                "too_many_requests",
                "too many requests in flight for " + who + "; retry after a second");
    }

    // ------------------------------------------------------------------------------------------------- models

    /**
     * The model a request names ({@code name}), or without a name the first one of {@code kind}: 404 naming the served
     * models when there is none, 400 naming what it serves when it is of another kind.
     */
    private ModelService pick(String name, ModelService.Kind kind, String endpoint) {
        ModelService m;
        if (name != null) {
            m = models.get(name);
            if (m == null)
                throw new ApiError(
                        404,
                        "invalid_request_error",
                        "model_not_found",
                        "model \"" + name + "\" is not served here (served: " + served() + ")");
        } else {
            m = models.values().stream().filter(x -> x.kind == kind).findFirst().orElse(null);
            if (m == null)
                throw new ApiError(
                        404,
                        "invalid_request_error",
                        "not_found",
                        endpoint + " is not served by any model here (served: " + served() + ")");
        }
        if (m.kind != kind && !(kind == null && m.isText()))
            throw ApiError.badRequest(
                    "wrong_model_kind",
                    "model \"" + m.name + "\" serves " + m.kind.serves + ", not " + endpoint + " (served: " + served()
                            + ")");
        PICKED.set(m.name);
        return m;
    }

    /** Any text model named {@code name} (or the first text model): /tokenize and /decode. */
    private ModelService pickText(String name, String endpoint) {
        if (name == null)
            name = models.values().stream()
                    .filter(ModelService::isText)
                    .map(x -> x.name)
                    .findFirst()
                    .orElseThrow(() -> new ApiError(
                            404,
                            "invalid_request_error",
                            "not_found",
                            endpoint + " is not served by any model here (served: " + served() + ")"));
        return pick(name, null, endpoint);
    }

    /** The embedding models' task adapters, {@code name=task} (or "none"). */
    private String servedTasks() {
        List<String> l = new ArrayList<>();
        for (ModelService m : models.values())
            if (m.kind == ModelService.Kind.EMBED && m.embedder.task() != null) l.add(m.name + "=" + m.embedder.task());
        return l.isEmpty() ? "none" : String.join(", ", l);
    }

    private String served() {
        List<String> l = new ArrayList<>();
        for (ModelService m : models.values()) l.add(m.name + " (" + m.kind.label() + ")");
        return String.join(", ", l);
    }

    /** Runs {@code work} holding one of {@code m}'s admission permits (429 for this model when none is left). */
    private static <T> T admitted(ModelService m, Supplier<T> work) {
        if (!m.admitted.tryAcquire()) throw tooMany("model \"" + m.name + "\"");
        try {
            return work.get();
        } finally {
            m.admitted.release();
        }
    }

    // ------------------------------------------------------------------------------------------------- endpoints

    private String openAi(byte[] body, long deadline) {
        List<String> input = null;
        boolean base64 = false;
        Integer dimensions = null;
        String name = null, task = null;
        JsonIn.Obj o = JsonIn.object(body, OPENAI);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "input" -> input = JsonIn.texts(o.r, "input");
                    case "model" -> name = JsonIn.optString(o.r, k);
                    case "user" -> JsonIn.optString(o.r, k);
                    case "encoding_format" -> {
                        String f = JsonIn.string(o.r, k);
                        if (!f.equals("float") && !f.equals("base64"))
                            throw ApiError.badRequest("invalid_value", "encoding_format must be float or base64");
                        base64 = f.equals("base64");
                    }
                    case "dimensions" -> dimensions = JsonIn.integer(o.r, k);
                    case "task" -> task = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (input == null) throw ApiError.badRequest("missing_parameter", "input is required");
        // Jina's API names the task adapter per request; a served model has one merged (attn serve --task): without a
        // model name the task picks the first model serving it
        String asked = task;
        ModelService picked = name == null && task != null
                ? models.values().stream()
                        .filter(x -> x.kind == ModelService.Kind.EMBED && asked.equals(x.embedder.task()))
                        .findFirst()
                        .orElseThrow(() -> ApiError.badRequest(
                                "invalid_value",
                                "task \"" + asked + "\" is not served here (served tasks: " + servedTasks()
                                        + "; attn serve --task [NAME=]TASK)"))
                : pick(name, ModelService.Kind.EMBED, "/v1/embeddings");
        // a model named with another of its tasks: the copy serving that task (attn serve --task NAME=T1,T2 serves T2
        // as NAME/T2)
        ModelService model = task != null
                        && !task.equals(picked.embedder.task())
                        && models.get(picked.name + "/" + task) instanceof ModelService v
                        && v.kind == ModelService.Kind.EMBED
                        && task.equals(v.embedder.task())
                ? v
                : picked;
        PICKED.set(model.name);
        if (task != null && !task.equals(model.embedder.task()))
            throw ApiError.badRequest(
                    "invalid_value",
                    "task \"" + task + "\" is not served by model " + model.name + ": "
                            + (model.embedder.task() == null
                                    ? "it runs no task adapter (serve a task LoRA model with attn serve --task NAME)"
                                    : "it serves task \"" + model.embedder.task() + "\" (attn serve --task)"));
        if (dimensions != null && (dimensions < 1 || dimensions > model.dimension()))
            throw ApiError.badRequest(
                    "invalid_value",
                    "dimensions " + dimensions + " is not available: this model's vectors have " + model.dimension()
                            + " (ask for 1 to " + model.dimension() + ": the first ones, Matryoshka-style)");
        List<String> in = input;
        Embeddings e = admitted(model, () -> {
            TokenizedTexts t = admit(model, in, true, null, false);
            return await(model.embeddings().submit(t, deadline), deadline);
        });
        int dim = dimensions != null ? dimensions : model.dimension();
        StringBuilder b = new StringBuilder(64 + e.vectors().length * dim * 12);
        b.append("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < e.vectors().length; i++) {
            float[] v = matryoshka(e.vectors()[i], dim, model.normalizes);
            b.append(i == 0 ? "" : ",")
                    .append("{\"object\":\"embedding\",\"index\":")
                    .append(i)
                    .append(",\"embedding\":");
            if (base64) b.append('"').append(JsonOut.base64(v)).append('"');
            else JsonOut.floats(b, v);
            b.append('}');
        }
        long tokens = e.totalTokens();
        b.append("],\"model\":")
                .append(JsonOut.string(model.name))
                .append(",\"usage\":{\"prompt_tokens\":")
                .append(tokens)
                .append(",\"total_tokens\":")
                .append(tokens)
                .append("}}");
        return b.toString();
    }

    /**
     * The first {@code dim} values of {@code v}, L2-normalized when {@code normalize} (the model's full vector is
     * normalized the same way when {@code dim} is the whole of it: the bits of {@link Embedder#normalize}).
     */
    static float[] matryoshka(float[] v, int dim, boolean normalize) {
        float[] c = dim == v.length ? v.clone() : java.util.Arrays.copyOf(v, dim);
        if (normalize) Embedder.normalize(c);
        return c;
    }

    /** TEI's {@code truncation_direction}: right (the default) or left. */
    private static boolean left(String d) {
        if (d == null || d.equalsIgnoreCase("right")) return false;
        if (d.equalsIgnoreCase("left")) return true;
        throw ApiError.badRequest("invalid_value", "truncation_direction must be Right or Left, got \"" + d + "\"");
    }

    private String tei(byte[] body, long deadline) {
        List<String> inputs = null;
        String promptName = null, name = null;
        boolean normalize = true, truncate = false, left = false;
        JsonIn.Obj o = JsonIn.object(body, TEI);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "inputs" -> inputs = JsonIn.texts(o.r, "inputs");
                    case "normalize" -> normalize = JsonIn.bool(o.r, k);
                    case "truncate" -> truncate = JsonIn.bool(o.r, k);
                    case "truncation_direction" -> left = left(JsonIn.optString(o.r, k));
                    case "prompt_name" -> promptName = JsonIn.optString(o.r, k);
                    case "model" -> name = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (inputs == null) throw ApiError.badRequest("missing_parameter", "inputs is required");
        ModelService model = pick(name, ModelService.Kind.EMBED, "/embed");
        List<String> in = inputs;
        String pn = promptName;
        boolean tr = truncate, lf = left;
        Embeddings e = admitted(model, () -> {
            TokenizedTexts t = admit(model, in, tr, pn, lf);
            return await(model.embeddings().submit(t, deadline), deadline);
        });
        StringBuilder b = new StringBuilder(16 + e.vectors().length * model.dimension() * 12).append('[');
        for (int i = 0; i < e.vectors().length; i++) {
            if (i > 0) b.append(',');
            JsonOut.floats(b, ModelService.maybeNormalized(e.vectors()[i], normalize));
        }
        return b.append(']').toString();
    }

    private String teiRerank(byte[] body, long deadline) {
        String query = null, name = null;
        List<String> texts = null;
        boolean raw = false, returnText = false, truncate = false, left = false;
        JsonIn.Obj o = JsonIn.object(body, TEI_RERANK);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "query" -> query = JsonIn.string(o.r, k);
                    case "texts" -> texts = JsonIn.texts(o.r, k);
                    case "raw_scores" -> raw = JsonIn.bool(o.r, k);
                    case "return_text" -> returnText = JsonIn.bool(o.r, k);
                    case "truncate" -> truncate = JsonIn.bool(o.r, k);
                    case "truncation_direction" -> left = left(JsonIn.optString(o.r, k));
                    case "model" -> name = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (query == null) throw ApiError.badRequest("missing_parameter", "query is required");
        if (texts == null) throw ApiError.badRequest("missing_parameter", "texts is required");
        ModelService model = pick(name, ModelService.Kind.RERANK, "/rerank");
        float[] scores = rerank(model, query, texts, raw, truncate, left, deadline);
        StringBuilder b = new StringBuilder("[");
        int i = 0;
        for (Reranker.Ranked r : Reranker.ranked(scores, 0)) {
            b.append(i++ == 0 ? "" : ",")
                    .append("{\"index\":")
                    .append(r.index())
                    .append(",\"score\":")
                    .append(JsonOut.number(r.score()));
            if (returnText) b.append(",\"text\":").append(JsonOut.string(texts.get(r.index())));
            b.append('}');
        }
        return b.append(']').toString();
    }

    private String cohereRerank(byte[] body, long deadline) {
        String query = null, name = null;
        List<String> documents = null;
        Integer topN = null;
        boolean returnDocuments = false;
        JsonIn.Obj o = JsonIn.object(body, COHERE_RERANK);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "query" -> query = JsonIn.string(o.r, k);
                    case "documents" -> documents = documents(o.r);
                    case "top_n" -> topN = JsonIn.integer(o.r, k);
                    case "return_documents" -> returnDocuments = JsonIn.bool(o.r, k);
                    case "model" -> name = JsonIn.optString(o.r, k);
                    case "max_chunks_per_doc", "rank_fields" -> o.r.skipValue();
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (query == null) throw ApiError.badRequest("missing_parameter", "query is required");
        if (documents == null) throw ApiError.badRequest("missing_parameter", "documents is required");
        if (topN != null && (topN < 1 || topN > documents.size()))
            throw ApiError.badRequest(
                    "invalid_value",
                    "top_n " + topN + " is not between 1 and the " + documents.size() + " documents sent");
        ModelService model = pick(name, ModelService.Kind.RERANK, "/v1/rerank");
        float[] scores = rerank(model, query, documents, false, true, false, deadline);
        StringBuilder b = new StringBuilder("{\"id\":")
                .append(JsonOut.string(java.util.UUID.randomUUID().toString()))
                .append(",\"results\":[");
        int i = 0;
        for (Reranker.Ranked r : Reranker.ranked(scores, topN == null ? 0 : topN)) {
            b.append(i++ == 0 ? "" : ",")
                    .append("{\"index\":")
                    .append(r.index())
                    .append(",\"relevance_score\":")
                    .append(JsonOut.number(r.score()));
            if (returnDocuments)
                b.append(",\"document\":{\"text\":")
                        .append(JsonOut.string(documents.get(r.index())))
                        .append('}');
            b.append('}');
        }
        return b.append("],\"model\":")
                .append(JsonOut.string(model.name))
                .append(",\"meta\":{\"billed_units\":{\"search_units\":1}}}")
                .toString();
    }

    /** Cohere's documents: strings, or objects with a "text" member. */
    private static List<String> documents(JsonReader r) throws IOException {
        if (r.peek() != JsonToken.BEGIN_ARRAY)
            throw ApiError.badRequest("invalid_type", "documents must be an array of strings");
        r.beginArray();
        List<String> out = new ArrayList<>();
        while (r.hasNext()) {
            if (r.peek() == JsonToken.STRING) out.add(r.nextString());
            else if (r.peek() == JsonToken.BEGIN_OBJECT) {
                r.beginObject();
                String text = null;
                while (r.hasNext()) {
                    String k = r.nextName();
                    if (k.equals("text") && r.peek() == JsonToken.STRING) text = r.nextString();
                    else r.skipValue();
                }
                r.endObject();
                if (text == null)
                    throw ApiError.badRequest("invalid_type", "documents[" + out.size() + "] has no \"text\" string");
                out.add(text);
            } else throw ApiError.badRequest("invalid_type", "documents[" + out.size() + "] must be a string");
        }
        r.endArray();
        if (out.isEmpty()) throw ApiError.badRequest("invalid_value", "documents must not be empty");
        return out;
    }

    /** The passages' scores for the query, in input order, batched with other requests' pairs. */
    private float[] rerank(
            ModelService model,
            String query,
            List<String> passages,
            boolean raw,
            boolean truncate,
            boolean left,
            long deadline) {
        float[][] logits = admitted(model, () -> {
            if (passages.size() > options.maxInputs())
                throw ApiError.tooLarge(
                        "too_many_inputs",
                        passages.size() + " passages: at most " + options.maxInputs() + " per request");
            TokenizedTexts t;
            try {
                t = model.reranker.tokenize(query, passages, left);
            } catch (io.attn.AttnException e) {
                throw ApiError.badRequest("invalid_input", e.getMessage());
            }
            checkLimits(model, t, truncate, "pair");
            return await(model.logits().submit(t, deadline), deadline);
        });
        float[] out = new float[logits.length];
        for (int i = 0; i < logits.length; i++)
            out[i] = raw ? logits[i][0] : model.reranker.activate(logits[i])[0];
        return out;
    }

    /**
     * TEI's {@code /predict} inputs: a text ({@code "a"}), one input as a list ({@code ["a"]}, or the pair {@code ["a",
     * "b"]}), or a batch of them ({@code [["a"], ["b", "c"], ...]}). {@code single}: the answer is one input's list
     * of labels, not a list of lists.
     */
    record PredictInputs(boolean single, List<List<String>> inputs) {}

    static PredictInputs predictInputs(JsonReader r) throws IOException {
        final String shape = "inputs must be a text, a pair [\"a\", \"b\"], or a batch [[\"a\"], [\"b\", \"c\"], ...]";
        JsonToken t = r.peek();
        if (t == JsonToken.STRING) return new PredictInputs(true, List.of(List.of(r.nextString())));
        if (t != JsonToken.BEGIN_ARRAY) throw ApiError.badRequest("invalid_type", shape);
        r.beginArray();
        if (!r.hasNext()) throw ApiError.badRequest("invalid_value", "inputs must not be empty");
        if (r.peek() == JsonToken.STRING) {
            List<String> one = new ArrayList<>();
            while (r.hasNext()) {
                if (r.peek() != JsonToken.STRING)
                    throw ApiError.badRequest("invalid_type", "inputs[" + one.size() + "] must be a string; " + shape);
                one.add(r.nextString());
            }
            r.endArray();
            if (one.size() > 2)
                throw ApiError.badRequest(
                        "invalid_value",
                        "inputs holds " + one.size() + " strings: a list of strings is one input, a text or a pair;"
                                + " send several as a batch [[\"a\"], [\"b\"], ...]");
            return new PredictInputs(true, List.of(List.copyOf(one)));
        }
        List<List<String>> batch = new ArrayList<>();
        while (r.hasNext()) {
            String at = "inputs[" + batch.size() + "]";
            if (r.peek() != JsonToken.BEGIN_ARRAY)
                throw ApiError.badRequest("invalid_type", at + " must be a list of one or two strings; " + shape);
            r.beginArray();
            List<String> one = new ArrayList<>();
            while (r.hasNext()) {
                if (r.peek() != JsonToken.STRING)
                    throw ApiError.badRequest("invalid_type", at + "[" + one.size() + "] must be a string");
                one.add(r.nextString());
            }
            r.endArray();
            if (one.isEmpty() || one.size() > 2)
                throw ApiError.badRequest(
                        "invalid_value", at + " holds " + one.size() + " strings: one text or a pair of two");
            batch.add(List.copyOf(one));
        }
        r.endArray();
        return new PredictInputs(false, batch);
    }

    private String predict(byte[] body, long deadline) {
        PredictInputs inputs = null;
        boolean raw = false, truncate = false, left = false;
        String name = null;
        JsonIn.Obj o = JsonIn.object(body, PREDICT);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "inputs" -> inputs = predictInputs(o.r);
                    case "raw_scores" -> raw = JsonIn.bool(o.r, k);
                    case "truncate" -> truncate = JsonIn.bool(o.r, k);
                    case "truncation_direction" -> left = left(JsonIn.optString(o.r, k));
                    case "model" -> name = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (inputs == null) throw ApiError.badRequest("missing_parameter", "inputs is required");
        ModelService model = pick(name, ModelService.Kind.CLASSIFY, "/predict");
        List<List<String>> in = inputs.inputs();
        boolean tr = truncate, lf = left;
        float[][] logits = admitted(model, () -> {
            if (in.size() > options.maxInputs())
                throw ApiError.tooLarge(
                        "too_many_inputs", in.size() + " inputs: at most " + options.maxInputs() + " per request");
            TokenizedTexts t;
            try {
                t = model.classifier.tokenizeInputs(in, lf);
            } catch (io.attn.AttnException e) {
                throw ApiError.badRequest("invalid_input", e.getMessage());
            }
            checkLimits(model, t, tr, "input");
            return await(model.logits().submit(t, deadline), deadline);
        });
        List<String> labels = model.classifier.labels();
        StringBuilder b = new StringBuilder(inputs.single() ? "" : "[");
        for (int i = 0; i < logits.length; i++) {
            float[] s = raw ? logits[i] : model.classifier.activate(logits[i]);
            Integer[] order = new Integer[s.length];
            for (int k = 0; k < s.length; k++) order[k] = k;
            java.util.Arrays.sort(order, (x, y) -> Float.compare(s[y], s[x]));
            b.append(i == 0 ? "[" : ",[");
            for (int k = 0; k < order.length; k++)
                b.append(k == 0 ? "" : ",")
                        .append("{\"label\":")
                        .append(JsonOut.string(labels.get(order[k])))
                        .append(",\"score\":")
                        .append(JsonOut.number(s[order[k]]))
                        .append('}');
            b.append(']');
        }
        return (inputs.single() ? b : b.append(']')).toString();
    }

    private String tokenize(byte[] body) {
        List<String> inputs = null;
        boolean special = true;
        String name = null;
        JsonIn.Obj o = JsonIn.object(body, TOKENIZE);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "inputs" -> inputs = JsonIn.texts(o.r, "inputs");
                    case "add_special_tokens" -> special = JsonIn.bool(o.r, k);
                    case "prompt_name" -> {
                        if (JsonIn.optString(o.r, k) != null)
                            throw ApiError.badRequest("invalid_value", "prompt_name is not supported by /tokenize");
                    }
                    case "model" -> name = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (inputs == null) throw ApiError.badRequest("missing_parameter", "inputs is required");
        if (inputs.size() > options.maxInputs())
            throw ApiError.tooLarge(
                    "too_many_inputs", inputs.size() + " inputs: at most " + options.maxInputs() + " per request");
        ModelService model = pickText(name, "/tokenize");
        List<String> in = inputs;
        boolean sp = special;
        List<List<Token>> tokens = admitted(model, () -> model.tokenDetails(in, sp));
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < tokens.size(); i++) {
            b.append(i == 0 ? "[" : ",[");
            List<Token> l = tokens.get(i);
            for (int k = 0; k < l.size(); k++) {
                Token t = l.get(k);
                b.append(k == 0 ? "" : ",")
                        .append("{\"id\":")
                        .append(t.id())
                        .append(",\"text\":")
                        .append(JsonOut.string(t.text()))
                        .append(",\"special\":")
                        .append(t.special())
                        .append(",\"start\":")
                        .append(t.start() < 0 ? "null" : Integer.toString(t.start()))
                        .append(",\"stop\":")
                        .append(t.stop() < 0 ? "null" : Integer.toString(t.stop()))
                        .append('}');
            }
            b.append(']');
        }
        return b.append(']').toString();
    }

    private String decode(byte[] body) {
        List<int[]> ids = null;
        boolean batch = false, skip = true;
        String name = null;
        JsonIn.Obj o = JsonIn.object(body, DECODE);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "ids" -> {
                        if (o.r.peek() != JsonToken.BEGIN_ARRAY)
                            throw ApiError.badRequest("invalid_type", "ids must be an array of token ids");
                        o.r.beginArray();
                        ids = new ArrayList<>();
                        if (o.r.hasNext() && o.r.peek() == JsonToken.BEGIN_ARRAY) {
                            batch = true;
                            while (o.r.hasNext()) ids.add(idArray(o.r, "ids[" + ids.size() + "]"));
                        } else ids.add(idRest(o.r, "ids"));
                        o.r.endArray();
                    }
                    case "skip_special_tokens" -> skip = JsonIn.bool(o.r, k);
                    case "model" -> name = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (ids == null) throw ApiError.badRequest("missing_parameter", "ids is required");
        ModelService model = pickText(name, "/decode");
        List<int[]> all = ids;
        boolean sk = skip;
        List<String> texts = admitted(model, () -> {
            List<String> out = new ArrayList<>();
            for (int[] a : all) out.add(model.decode(a, sk));
            return out;
        });
        if (!batch) return JsonOut.string(texts.get(0));
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < texts.size(); i++) b.append(i == 0 ? "" : ",").append(JsonOut.string(texts.get(i)));
        return b.append(']').toString();
    }

    private static int[] idArray(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.BEGIN_ARRAY)
            throw ApiError.badRequest("invalid_type", name + " must be an array of token ids");
        r.beginArray();
        int[] a = idRest(r, name);
        r.endArray();
        return a;
    }

    /** The token ids up to the end of the array being read (not closed). */
    private static int[] idRest(JsonReader r, String name) throws IOException {
        List<Integer> l = new ArrayList<>();
        while (r.hasNext()) {
            int id = JsonIn.integer(r, name + "[" + l.size() + "]");
            if (id < 0) throw ApiError.badRequest("invalid_value", name + "[" + l.size() + "] is negative");
            l.add(id);
        }
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    private String encode(byte[] body) {
        ModelService model = pick(null, ModelService.Kind.TENSOR, "/v1/encode");
        Tensor mask = null;
        boolean causal = false;
        AttentionWeights weights = AttentionWeights.NONE;
        JsonIn.Obj o = JsonIn.object(body, ENCODE);
        int[] shape = null;
        float[] data = null;
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "shape" -> shape = shape(o.r, "shape");
                    case "data" -> data = numbers(o.r, "data");
                    case "key_padding_mask" -> mask = tensor(o.r, "key_padding_mask");
                    case "causal" -> causal = JsonIn.bool(o.r, k);
                    case "attention_weights" ->
                        weights = switch (JsonIn.string(o.r, k)) {
                            case "none" -> AttentionWeights.NONE;
                            case "averaged" -> AttentionWeights.AVERAGED;
                            case "per_head" -> AttentionWeights.PER_HEAD;
                            default ->
                                throw ApiError.badRequest(
                                        "invalid_value", "attention_weights must be none, averaged or per_head");
                        };
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (shape == null || data == null)
            throw ApiError.badRequest("missing_parameter", "shape and data are required");
        Tensor x = of(data, shape, "data");
        Tensor m = mask;
        boolean c = causal;
        AttentionWeights aw = weights;
        Result r = admitted(model, () -> model.encode(x, m, c, aw));
        StringBuilder b = new StringBuilder();
        tensorJson(b, r.output());
        b.setLength(b.length() - 1); // reopen the object for the weights
        if (!r.attentionWeights().isEmpty()) {
            b.append(",\"attention_weights\":{");
            int i = 0;
            for (Map.Entry<String, Tensor> w : r.attentionWeights().entrySet()) {
                b.append(i++ == 0 ? "" : ",").append(JsonOut.string(w.getKey())).append(':');
                tensorJson(b, w.getValue());
            }
            b.append('}');
        }
        return b.append('}').toString();
    }

    // ------------------------------------------------------------------------------------------------- pieces

    /**
     * The texts tokenized (after the prompt {@code promptName}, null: the model's default; cut on the left when
     * {@code left}) and checked against the limits.
     */
    private TokenizedTexts admit(
            ModelService model, List<String> texts, boolean truncate, String promptName, boolean left) {
        if (texts.size() > options.maxInputs())
            throw ApiError.tooLarge(
                    "too_many_inputs", texts.size() + " inputs: at most " + options.maxInputs() + " per request");
        TokenizedTexts t = model.tokenize(texts, promptName, left);
        checkLimits(model, t, truncate, "input");
        return t;
    }

    /** A text (or pair) over the maximum length is 413 unless {@code truncate}; the request's tokens at most... */
    private void checkLimits(ModelService model, TokenizedTexts t, boolean truncate, String what) {
        if (!truncate)
            for (int i = 0; i < t.size(); i++)
                if (t.truncated(i))
                    throw ApiError.tooLarge(
                            "input_too_long",
                            what + " " + i + " is longer than the model's " + model.maxLength()
                                    + " tokens (send truncate: true to cut it)");
        if (t.totalTokens() > options.maxRequestTokens())
            throw ApiError.tooLarge(
                    "too_many_tokens",
                    t.totalTokens() + " tokens: at most " + options.maxRequestTokens() + " per request");
    }

    private static <T> T await(CompletableFuture<T> f, long deadline) {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(false); // dropped from the queue if it has not run yet
            throw ApiError.unavailable("timeout", "the request was not answered within its deadline");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ApiError a) throw a;
            throw new ApiError(500, "server_error", "internal_error", "internal error");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiError.unavailable("shutting_down", "the server is shutting down");
        }
    }

    private void authorize(Request request) {
        if (keyHash == null) return;
        String h = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        String token = h != null && h.regionMatches(true, 0, "Bearer ", 0, 7)
                ? h.substring(7).trim()
                : "";
        // compare fixed-length digests in constant time: the key's length leaks nothing either
        if (!MessageDigest.isEqual(keyHash, sha256(token)))
            throw new ApiError(401, "authentication_error", "invalid_api_key", "missing or wrong API key");
    }

    private static void requireMethod(String method, String allowed) {
        if (!method.equals(allowed))
            throw new ApiError(405, "invalid_request_error", "method_not_allowed", "use " + allowed);
    }

    private void cors(Request request, Response response) {
        String origin = options.corsOrigin();
        if (origin == null) return;
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_HEADERS, "authorization, content-type");
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS");
    }

    private String info(String name) {
        ModelService model = name == null ? models.values().iterator().next() : models.get(name);
        if (model == null)
            throw new ApiError(
                    404,
                    "invalid_request_error",
                    "model_not_found",
                    "model \"" + name + "\" is not served here (served: " + served() + ")");
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : new java.util.TreeMap<>(model.info()).entrySet()) {
            b.append(b.length() > 1 ? "," : "")
                    .append(JsonOut.string(e.getKey()))
                    .append(':');
            b.append(value(e.getValue()));
        }
        b.append(",\"device\":")
                .append(JsonOut.string(device))
                .append(",\"version\":")
                .append(JsonOut.string(version));
        b.append(",\"max_batch_tokens\":")
                .append(options.maxBatchTokens())
                .append(",\"max_inputs\":")
                .append(options.maxInputs())
                .append(",\"max_request_tokens\":")
                .append(options.maxRequestTokens())
                .append(",\"max_concurrent_requests\":")
                .append(model.maxQueued)
                .append(",\"requests_admitted\":")
                .append(model.admittedNow())
                .append(",\"models\":[");
        int i = 0;
        for (ModelService m : models.values())
            b.append(i++ == 0 ? "" : ",")
                    .append("{\"model\":")
                    .append(JsonOut.string(m.name))
                    .append(",\"model_type\":")
                    .append(JsonOut.string(m.kind.label()))
                    .append('}');
        return b.append("]}").toString();
    }

    private static String value(Object v) {
        if (v instanceof String s) return JsonOut.string(s);
        if (v instanceof List<?> l) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < l.size(); i++) b.append(i == 0 ? "" : ",").append(value(l.get(i)));
            return b.append(']').toString();
        }
        return String.valueOf(v);
    }

    /** OpenAI's {@code GET /v1/models}. */
    private String modelList() {
        StringBuilder b = new StringBuilder("{\"object\":\"list\",\"data\":[");
        int i = 0;
        for (ModelService m : models.values())
            b.append(i++ == 0 ? "" : ",")
                    .append("{\"id\":")
                    .append(JsonOut.string(m.name))
                    .append(",\"object\":\"model\",\"created\":0,\"owned_by\":\"attn\",\"type\":")
                    .append(JsonOut.string(m.kind.label()))
                    .append('}');
        return b.append("]}").toString();
    }

    private static int send(Response response, Callback callback, int status, String type, String body) {
        response.setStatus(status);
        if (type != null) response.getHeaders().put(HttpHeader.CONTENT_TYPE, type + "; charset=utf-8");
        if (body == null) callback.succeeded();
        else response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
        return status;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // --------------------------------------------------------------------------------------------- tensors in JSON

    private static int[] shape(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.BEGIN_ARRAY) throw ApiError.badRequest("invalid_type", name + " must be an array");
        r.beginArray();
        List<Integer> dims = new ArrayList<>();
        while (r.hasNext()) {
            int d = JsonIn.integer(r, name);
            if (d <= 0 || dims.size() >= 4)
                throw ApiError.badRequest("invalid_value", name + " must be 1 to 4 positive dimensions");
            dims.add(d);
        }
        r.endArray();
        return dims.stream().mapToInt(Integer::intValue).toArray();
    }

    private static float[] numbers(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.BEGIN_ARRAY) throw ApiError.badRequest("invalid_type", name + " must be an array");
        r.beginArray();
        float[] v = new float[64];
        int n = 0;
        while (r.hasNext()) {
            if (r.peek() != JsonToken.NUMBER)
                throw ApiError.badRequest("invalid_type", name + "[" + n + "] must be a number");
            double d = r.nextDouble();
            float f = (float) d;
            if (!Float.isFinite(f))
                throw ApiError.badRequest("invalid_value", name + "[" + n + "] is out of float32 range");
            if (n == v.length) v = java.util.Arrays.copyOf(v, 2 * n);
            v[n++] = f;
        }
        r.endArray();
        return java.util.Arrays.copyOf(v, n);
    }

    private static Tensor tensor(JsonReader r, String name) throws IOException {
        if (r.peek() != JsonToken.BEGIN_OBJECT)
            throw ApiError.badRequest("invalid_type", name + " must be {\"shape\": [...], \"data\": [...]}");
        r.beginObject();
        int[] shape = null;
        float[] data = null;
        Set<String> seen = new java.util.HashSet<>();
        while (r.hasNext()) {
            String k = r.nextName();
            if (!seen.add(k)) throw ApiError.badRequest("duplicate_parameter", "duplicate argument: " + name + "." + k);
            switch (k) {
                case "shape" -> shape = shape(r, name + ".shape");
                case "data" -> data = numbers(r, name + ".data");
                default -> throw ApiError.badRequest("unknown_parameter", "unrecognized argument: " + name + "." + k);
            }
        }
        r.endObject();
        if (shape == null || data == null)
            throw ApiError.badRequest("missing_parameter", name + " needs shape and data");
        return of(data, shape, name + ".data");
    }

    private static Tensor of(float[] data, int[] shape, String name) {
        long n = 1;
        for (int d : shape) n *= d;
        if (n != data.length)
            throw ApiError.badRequest("invalid_value", name + " has " + data.length + " numbers, the shape needs " + n);
        return Tensors.of(data, shape);
    }

    private static void tensorJson(StringBuilder b, Tensor t) {
        b.append("{\"shape\":[");
        int[] dims = t.shape().dims();
        for (int i = 0; i < dims.length; i++) b.append(i == 0 ? "" : ",").append(dims[i]);
        b.append("],\"data\":");
        JsonOut.floats(b, t.data());
        b.append('}');
    }
}
