package io.attn.server;

import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Result;
import io.attn.engine.Tensors;
import io.attn.tensor.Tensor;
import io.attn.text.Embeddings;
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
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP API. Requests are handled on virtual threads (blocking while a batch runs costs nothing); the model work is
 * the batcher's. Endpoints:
 *
 * <ul>
 *   <li>{@code POST /v1/embeddings}: OpenAI's request and response ({@code input} a string or strings, {@code
 *       encoding_format} float|base64, {@code dimensions} only if equal to the model's, {@code model} and {@code user}
 *       accepted as they are); unit vectors when the model lists a Normalize module.
 *   <li>{@code POST /embed}: Hugging Face text-embeddings-inference's ({@code inputs}, {@code normalize} default true,
 *       {@code truncate} default false: a text over the maximum length is then 413); a JSON array of arrays.
 *   <li>{@code POST /v1/encode}: the engine's tensor models ({@code {"shape":[B,L,E],"data":[...]}} plus optional
 *       {@code key_padding_mask}, {@code causal}, {@code attention_weights}).
 *   <li>{@code GET /health} (200 once loaded and warm, 503 while starting or draining; open without the API key),
 *       {@code GET /info}, {@code GET /metrics} (Prometheus text).
 * </ul>
 *
 * Limits, each a 4xx JSON error: the API key (401), admitted requests (429 with Retry-After), texts per request, tokens
 * per text and per request (413), a request's deadline (503). Thread-safe.
 */
final class ApiHandler extends Handler.Abstract {
    private static final Set<String> OPENAI = Set.of("input", "model", "encoding_format", "dimensions", "user");
    private static final Set<String> TEI =
            Set.of("inputs", "normalize", "truncate", "truncation_direction", "prompt_name");
    private static final Set<String> ENCODE =
            Set.of("shape", "data", "key_padding_mask", "causal", "attention_weights");

    private final ModelService model;
    private final Batcher batcher;
    private final ServerOptions options;
    private final Metrics metrics;
    private final Semaphore admitted;
    private final Drain drain;
    private final byte[] keyHash;
    private final String device, version;
    private volatile boolean ready, draining;

    ApiHandler(
            ModelService model,
            Batcher batcher,
            ServerOptions options,
            Metrics metrics,
            Semaphore admitted,
            Drain drain,
            String device,
            String version) {
        this.model = model;
        this.batcher = batcher;
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

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        long start = System.nanoTime();
        String path = Request.getPathInContext(request), method = request.getMethod();
        String endpoint =
                switch (path) {
                    case "/v1/embeddings", "/embed", "/v1/encode", "/health", "/info", "/metrics" -> path;
                    default -> "other";
                };
        int status;
        drain.enter();
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
        metrics.requests.labelValues(endpoint, Integer.toString(status)).inc();
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
                return send(response, callback, 200, "application/json", info());
            }
            case "/metrics" -> {
                requireMethod(method, "GET");
                authorize(request);
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, metrics.contentType());
                response.write(true, ByteBuffer.wrap(metrics.scrape()), callback);
                return 200;
            }
            case "/v1/embeddings", "/embed", "/v1/encode" -> {
                requireMethod(method, "POST");
                authorize(request);
                if (!drain.receivedBefore(request))
                    throw ApiError.unavailable("shutting_down", "the server is shutting down");
                if (!admitted.tryAcquire())
                    throw new ApiError(
                            429,
                            "rate_limit_error",
                            "too_many_requests",
                            "too many requests in flight; retry after a second");
                try {
                    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.requestTimeoutMillis());
                    byte[] body = BodyReader.read(request, options.maxBodyBytes(), options.minDataRate(), deadline);
                    String json =
                            switch (path) {
                                case "/v1/embeddings" -> openAi(body, deadline);
                                case "/embed" -> tei(body, deadline);
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

    // ------------------------------------------------------------------------------------------------- endpoints

    private String openAi(byte[] body, long deadline) {
        if (!model.isText()) throw notHere("/v1/embeddings");
        List<String> input = null;
        boolean base64 = false;
        Integer dimensions = null;
        JsonIn.Obj o = JsonIn.object(body, OPENAI);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "input" -> input = JsonIn.texts(o.r, "input");
                    case "model", "user" -> JsonIn.optString(o.r, k);
                    case "encoding_format" -> {
                        String f = JsonIn.string(o.r, k);
                        if (!f.equals("float") && !f.equals("base64"))
                            throw ApiError.badRequest("invalid_value", "encoding_format must be float or base64");
                        base64 = f.equals("base64");
                    }
                    case "dimensions" -> dimensions = JsonIn.integer(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (input == null) throw ApiError.badRequest("missing_parameter", "input is required");
        if (dimensions != null && dimensions != model.dimension())
            throw ApiError.badRequest(
                    "invalid_value",
                    "dimensions " + dimensions + " is not available: this model's" + " vectors have "
                            + model.dimension());
        TokenizedTexts t = admit(input, true);
        Embeddings e = await(batcher.submit(t, deadline), deadline);
        StringBuilder b = new StringBuilder(64 + e.vectors().length * model.dimension() * 12);
        b.append("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < e.vectors().length; i++) {
            float[] v = ModelService.maybeNormalized(e.vectors()[i], model.normalizes);
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

    private String tei(byte[] body, long deadline) {
        if (!model.isText()) throw notHere("/embed");
        List<String> inputs = null;
        String promptName = null;
        boolean normalize = true, truncate = false;
        JsonIn.Obj o = JsonIn.object(body, TEI);
        try {
            for (String k; (k = o.next()) != null; ) {
                switch (k) {
                    case "inputs" -> inputs = JsonIn.texts(o.r, "inputs");
                    case "normalize" -> normalize = JsonIn.bool(o.r, k);
                    case "truncate" -> truncate = JsonIn.bool(o.r, k);
                    case "truncation_direction" -> {
                        String d = JsonIn.optString(o.r, k);
                        if (d != null && !d.equalsIgnoreCase("right"))
                            throw ApiError.badRequest("invalid_value", "truncation_direction: only Right is supported");
                    }
                    case "prompt_name" -> promptName = JsonIn.optString(o.r, k);
                    default -> throw new IllegalStateException(k);
                }
            }
            JsonIn.end(o.r);
        } catch (IOException | IllegalStateException e) {
            throw JsonIn.malformed(e);
        }
        if (inputs == null) throw ApiError.badRequest("missing_parameter", "inputs is required");
        TokenizedTexts t = admit(inputs, truncate, promptName);
        Embeddings e = await(batcher.submit(t, deadline), deadline);
        StringBuilder b = new StringBuilder(16 + e.vectors().length * model.dimension() * 12).append('[');
        for (int i = 0; i < e.vectors().length; i++) {
            if (i > 0) b.append(',');
            JsonOut.floats(b, ModelService.maybeNormalized(e.vectors()[i], normalize));
        }
        return b.append(']').toString();
    }

    private String encode(byte[] body) {
        if (model.isText()) throw notHere("/v1/encode");
        Tensor x = null, mask = null;
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
        x = of(data, shape, "data");
        Result r = model.encode(x, mask, causal, weights);
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

    /** Checks a request's texts against the limits and tokenizes them. */
    private TokenizedTexts admit(List<String> texts, boolean truncate) {
        return admit(texts, truncate, null);
    }

    /** The texts tokenized (after the prompt {@code promptName}, null: the model's default) and checked. */
    private TokenizedTexts admit(List<String> texts, boolean truncate, String promptName) {
        if (texts.size() > options.maxInputs())
            throw ApiError.tooLarge(
                    "too_many_inputs", texts.size() + " inputs: at most " + options.maxInputs() + " per request");
        TokenizedTexts t = model.tokenize(texts, promptName);
        if (!truncate)
            for (int i = 0; i < t.size(); i++)
                if (t.truncated(i))
                    throw ApiError.tooLarge(
                            "input_too_long",
                            "input " + i + " is longer than the model's " + model.embedder.maxLength()
                                    + " tokens (send truncate: true to cut it)");
        if (t.totalTokens() > options.maxRequestTokens())
            throw ApiError.tooLarge(
                    "too_many_tokens",
                    t.totalTokens() + " tokens: at most " + options.maxRequestTokens() + " per request");
        return t;
    }

    private static Embeddings await(CompletableFuture<Embeddings> f, long deadline) {
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

    private static ApiError notHere(String path) {
        return new ApiError(
                404,
                "invalid_request_error",
                "not_found",
                path + " is not served for this kind of model"
                        + " (text models: /v1/embeddings and /embed; tensor models: /v1/encode)");
    }

    private void cors(Request request, Response response) {
        String origin = options.corsOrigin();
        if (origin == null) return;
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_HEADERS, "authorization, content-type");
        response.getHeaders().put(HttpHeader.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS");
    }

    private String info() {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : new java.util.TreeMap<>(model.info()).entrySet()) {
            b.append(b.length() > 1 ? "," : "")
                    .append(JsonOut.string(e.getKey()))
                    .append(':');
            b.append(e.getValue() instanceof String s ? JsonOut.string(s) : String.valueOf(e.getValue()));
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
                .append(options.maxRequestTokens());
        return b.append('}').toString();
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
