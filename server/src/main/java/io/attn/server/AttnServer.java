package io.attn.server;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.TaskAdapters;
import io.attn.text.EmbedderOptions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.SizeLimitHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * {@code attn serve}: one model behind an HTTP API ({@link ApiHandler}), on Jetty 12. Jetty parses HTTP and enforces
 * the transport limits (header size, body size against Content-Length and while a chunked body arrives, idle time, the
 * minimum rate at which a body must arrive, the number of connections), answering a malformed request with a 4xx and
 * closing its connection; requests are handled on virtual threads; the model's work is batched ({@link Batcher}).
 *
 * <p>Lifecycle: {@link #start} loads the model and runs one warm-up pass before the port opens (a model that fails to
 * load never opens it); {@link #close} drains: new requests get 503, requests in flight finish within the drain
 * timeout, what is left is answered 503, then the model and the engine's device are released. Thread-safe.
 */
public final class AttnServer implements AutoCloseable {
    /** Connections held at once; more wait in the kernel's accept queue. */
    static final int MAX_CONNECTIONS = 1024;

    private final ServerOptions options;
    private final Engine engine;
    private final Map<String, ModelService> models;
    private final Metrics metrics;
    private final Semaphore admitted;
    private final int maxAdmitted;
    private final Drain drain = new Drain();
    private final ApiHandler api;
    private final GracefulHandler graceful;
    private final Server server;
    private final ServerConnector connector;
    private volatile boolean closed;

    /** The model served as {@code name}, or null (for tests in this package). */
    ModelService model(String name) {
        return models.get(name);
    }

    private AttnServer(ServerOptions options, Engine engine, Map<String, ModelService> models, String version) {
        this.options = options;
        this.engine = engine;
        this.models = models;
        // requests read at once, all models together; each model then admits up to max-concurrent-requests
        this.maxAdmitted = options.maxQueuedRequests() * models.size();
        this.admitted = new Semaphore(maxAdmitted);
        Map<String, java.util.function.IntSupplier> byModel = new LinkedHashMap<>();
        for (ModelService m : models.values()) byModel.put(m.name, m::admittedNow);
        this.metrics = new Metrics(
                () -> {
                    int n = 0;
                    for (ModelService m : models.values()) n += m.admittedNow();
                    return n;
                },
                byModel);
        for (ModelService m : models.values())
            m.startBatching(options.maxBatchTokens(), options.maxWaitMillis(), metrics);
        this.api = new ApiHandler(models, options, metrics, admitted, drain, engine.device(), version);

        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("attn-http");
        threads.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(options.maxHeaderBytes());
        http.setSendServerVersion(false);
        http.setMinRequestDataRate(options.minDataRate());
        http.setIdleTimeout(options.idleTimeoutMillis());
        connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(options.host());
        connector.setPort(options.port());
        connector.setIdleTimeout(options.idleTimeoutMillis());
        connector.addBean(drain);
        server.addConnector(connector);
        server.addBean(new NetworkConnectionLimit(MAX_CONNECTIONS, server));
        graceful = new GracefulHandler(new SizeLimitHandler(options.maxBodyBytes(), -1));
        ((SizeLimitHandler) graceful.getHandler()).setHandler(api);
        server.setHandler(graceful);
        server.setErrorHandler(new JsonErrors());
        server.setStopTimeout(options.drainTimeoutMillis());
        server.setStopAtShutdown(false); // the caller's signal handling decides
    }

    /**
     * Loads {@code model} on {@code engine} (owned by the server from then on), warms it up and starts listening.
     *
     * @throws AttnException the model cannot be loaded (nothing is listening then), or the port cannot be opened
     */
    public static AttnServer start(
            Engine engine, Path model, EmbedderOptions embedder, ServerOptions options, String version) {
        Map<String, Path> one = new LinkedHashMap<>();
        one.put(null, model);
        return start(engine, one, embedder, options, version);
    }

    /**
     * Loads several models on {@code engine} (owned by the server from then on), by the names clients pick them with
     * (a null name: the model's own, its folder's), warms each up and starts listening. Each model batches on its own
     * and admits up to {@code options.maxQueuedRequests()} requests.
     *
     * @throws AttnException a model cannot be loaded or two share a name (nothing is listening then), or the port
     *     cannot be opened
     */
    public static AttnServer start(
            Engine engine, Map<String, Path> models, EmbedderOptions embedder, ServerOptions options, String version) {
        return start(engine, models, embedder, Map.of(), options, version);
    }

    /**
     * The text models of the task LoRA folders that serve more than one task, by served name, read once per folder with
     * the tasks' adapters beside weights they share ({@link TaskAdapters.Mode#SHARE}), unless the options ask for
     * merged copies; empty where no folder serves two tasks.
     */
    static Map<String, io.attn.text.TextModel> sharedTasks(
            Map<String, Path> models, EmbedderOptions embedder, Map<String, String> tasks) {
        Map<String, io.attn.text.TextModel> out = new java.util.HashMap<>(); // a null name: one model, unnamed
        if (tasks.isEmpty() || embedder.taskAdapters() == TaskAdapters.Mode.MERGE) return out;
        Map<Path, List<String>> names = new LinkedHashMap<>(); // the served names of each folder serving a task
        for (var e : models.entrySet())
            if (e.getKey() != null && Files.isDirectory(e.getValue()))
                names.computeIfAbsent(e.getValue().toAbsolutePath().normalize(), p -> new java.util.ArrayList<>())
                        .add(e.getKey());
        for (var e : names.entrySet()) {
            List<String> served = e.getValue();
            // a name without a task of its own takes the options' (--task TASK for every model), else the base weights
            List<String> asked = served.stream()
                    .map(n -> tasks.getOrDefault(n, embedder.task()))
                    .toList();
            if (asked.stream().distinct().count() < 2 || asked.stream().allMatch(java.util.Objects::isNull)) continue;
            List<io.attn.text.TextModel> read =
                    io.attn.text.TextModel.read(e.getKey(), embedder.tokenizer(), asked, TaskAdapters.Mode.SHARE);
            for (int i = 0; i < served.size(); i++) out.put(served.get(i), read.get(i));
        }
        return out;
    }

    /**
     * Like {@link #start(Engine, Map, EmbedderOptions, ServerOptions, String)}, the models named in {@code tasks}
     * loaded with that task adapter ({@link EmbedderOptions#withTask}; the others with {@code embedder}'s): one task
     * LoRA folder may be served under several names, one per task, and a request's Jina {@code task} then picks the
     * model serving it. A folder served for several tasks is read once and its models share its weights, each task's
     * adapter run beside them ({@link TaskAdapters.Mode#SHARE}), unless {@code embedder}'s {@link
     * EmbedderOptions#taskAdapters} is {@code MERGE} (a merged copy of the weights per task: no cost per call).
     */
    public static AttnServer start(
            Engine engine,
            Map<String, Path> models,
            EmbedderOptions embedder,
            Map<String, String> tasks,
            ServerOptions options,
            String version) {
        Map<String, ModelService> loaded = new LinkedHashMap<>();
        try {
            if (models.isEmpty()) throw AttnException.badInput("no model to serve");
            Map<String, io.attn.text.TextModel> shared = sharedTasks(models, embedder, tasks);
            for (var e : models.entrySet()) {
                if (e.getKey() != null && !e.getKey().matches("[A-Za-z0-9._:/@+-]{1,128}"))
                    throw AttnException.badInput(
                            "model name \"" + e.getKey() + "\": use 1 to 128 letters, digits and . _ : / @ + -");
                String task = e.getKey() == null ? null : tasks.get(e.getKey());
                ModelService m = ModelService.load(
                        engine,
                        e.getKey(),
                        e.getValue(),
                        shared.get(e.getKey()),
                        task == null ? embedder : embedder.withTask(task),
                        options.maxBatchTokens(),
                        options.maxQueuedRequests());
                if (loaded.putIfAbsent(m.name, m) != null) {
                    m.close();
                    throw AttnException.badInput(
                            "two models are called \"" + m.name + "\": name them apart with --model NAME=DIR");
                }
                m.warmUp(options.warmupMillis());
            }
        } catch (RuntimeException | Error e) {
            for (ModelService m : loaded.values()) m.close();
            engine.close();
            throw e;
        }
        AttnServer s = new AttnServer(options, engine, loaded, version);
        try {
            s.server.start();
        } catch (Exception e) {
            s.close();
            throw AttnException.badInput(
                    "cannot listen on " + options.host() + ":" + options.port() + " (" + e.getMessage() + ")");
        }
        s.api.ready();
        return s;
    }

    /** The port listened on (the one picked when {@code port} was 0). */
    public int port() {
        return connector.getLocalPort();
    }

    /** The first model's name. */
    public String modelName() {
        return models.keySet().iterator().next();
    }

    /** Every model's name, in the order given. */
    public java.util.List<String> modelNames() {
        return java.util.List.copyOf(models.keySet());
    }

    /** Requests admitted and not yet answered (for tests). */
    int admittedForTest() {
        return maxAdmitted - admitted.availablePermits();
    }

    /** Whether the drain has started (for tests). */
    boolean drainingForTest() {
        return drain.draining();
    }

    /** Connections open now (for tests). */
    int connectionsForTest() {
        return drain.connections();
    }

    /** Blocks until the server has stopped. */
    public void join() throws InterruptedException {
        server.join();
    }

    /**
     * Stops gracefully: every request received before this call (see {@link Drain}) is answered from the model within
     * the drain timeout; new connections and later requests get 503 (and {@code /health} says draining); every answer
     * while draining closes its connection. Past the drain timeout what is left is answered 503; then the port closes
     * and the model and device are released. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        drain.start();
        api.draining();
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.drainTimeoutMillis());
        try {
            // wait for the requests received before the drain (queued in the batcher, running, or not yet parsed)
            drain.awaitQuiet(until);
            for (ModelService m : models.values()) m.stopBatching(); // anything left is answered 503
            graceful.shutdown().get(Math.max(1, (until - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // past the drain timeout: stop anyway
        }
        try {
            server.stop();
        } catch (Exception e) {
            // the port closes with the JVM in the worst case
        }
        for (ModelService m : models.values()) m.close();
        engine.close();
    }

    /** Jetty's own errors (bad request line, header too large, body too large, slow body...) as JSON. */
    private static final class JsonErrors extends ErrorHandler {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            int status = response.getStatus() >= 400 ? response.getStatus() : 500;
            Object attr = request.getAttribute(ERROR_STATUS);
            if (attr instanceof Integer i) status = i;
            String code =
                    switch (status) {
                        case 400 -> "bad_request";
                        case 408 -> "request_timeout";
                        case 413 -> "body_too_large";
                        case 414 -> "uri_too_long";
                        case 431 -> "headers_too_large";
                        default -> "http_" + status;
                    };
            String message =
                    switch (status) {
                        case 408 -> "the request body arrived too slowly";
                        case 413 -> "the request body is too large";
                        case 431 -> "the request headers are too large";
                        default -> "the request could not be handled (HTTP " + status + ")";
                    };
            ApiError e = new ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", code, message);
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json; charset=utf-8");
            if (status >= 400 && status != 401 && status != 404 && status != 405)
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            response.write(true, ByteBuffer.wrap(e.json().getBytes(StandardCharsets.UTF_8)), callback);
            return true;
        }
    }
}
