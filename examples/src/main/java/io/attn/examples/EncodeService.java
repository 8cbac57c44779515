package io.attn.examples;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.nn.ModelConfig;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small HTTP service on the JDK's built-in {@link HttpServer}: loads a model at start and answers {@code POST
 * /v1/encode} with the model's output for the posted input ({@link AttnModel#encode}: encoders, {@code
 * MultiheadAttention} and {@code SelfAttention} self-attention).
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -cp ... io.attn.examples.EncodeService --model enc.safetensors \
 *      [--config C.json] [--port 8080] [--host 127.0.0.1] [--device auto] [--threads N] [--max-body BYTES]
 * curl -s localhost:8080/v1/encode -H 'Content-Type: application/json' -d '{"shape":[2,16],"data":[...]}'
 * curl -s localhost:8080/v1/encode -H 'Content-Type: application/x-npy' --data-binary @x.npy -o y.npy
 * </pre>
 *
 * Requests: JSON {@code {"shape":[B,L,E],"data":[... B*L*E numbers, row-major]}} (or {@code [L,E]}) answered with JSON
 * of the same form, or an {@code .npy} body ({@code Content-Type: application/x-npy}) answered with an {@code .npy}
 * body. Errors are JSON {@code {"error":"...","code":"..."}}: 400 malformed body, wrong shape or non-finite values; 404
 * other paths; 405 other methods; 413 a body over the cap; 415 another content type; 503 while closing or when the
 * device fails; 500 an internal error.
 *
 * <p>Thread-safe: requests are served by a fixed pool of worker threads sharing the one model.
 */
public final class EncodeService implements AutoCloseable {
    /** The default cap on a request body: 16 MiB (a (4, 512, 1024) float32 .npy is 8 MiB). */
    public static final int DEFAULT_MAX_BODY = 16 << 20;

    public static final String PATH = "/v1/encode";

    private final HttpServer server;
    private final ExecutorService workers;
    private final AttnModel model;
    private final int maxBody;
    private final AutoCloseable owned; // the engine when the service opened it, else null
    private volatile boolean closing;

    private EncodeService(AttnModel model, InetSocketAddress address, int maxBody, int workers, AutoCloseable owned)
            throws IOException {
        ModelConfig.Kind k = model.kind();
        if (k == ModelConfig.Kind.TransformerDecoderLayer
                || k == ModelConfig.Kind.TransformerDecoder
                || k == ModelConfig.Kind.Transformer)
            throw AttnException.badInput(
                    "the encode service needs an encoder, MultiheadAttention or SelfAttention" + " model, not a " + k);
        this.model = model;
        this.maxBody = maxBody;
        this.owned = owned;
        this.server = HttpServer.create(address, 64);
        AtomicInteger n = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(workers, r -> new Thread(r, "encode-" + n.incrementAndGet()));
        server.setExecutor(this.workers);
        server.createContext("/", this::handle);
        server.start();
    }

    /**
     * Serves {@code model} on {@code address} (port 0 picks a free port) with {@code workers} request threads. The
     * model stays the caller's: close it after the service.
     */
    public static EncodeService start(AttnModel model, InetSocketAddress address, int maxBody, int workers)
            throws IOException {
        return new EncodeService(model, address, maxBody, workers, null);
    }

    /** Parses the command line, opens the engine, loads the model and starts serving; the service owns the engine. */
    public static EncodeService launch(String... args) throws IOException {
        Map<String, String> a = parse(args);
        Path model = Path.of(a.get("--model"));
        Path config = a.containsKey("--config") ? Path.of(a.get("--config")) : null;
        EngineOptions opts = EngineOptions.defaults()
                .withDevice(a.get("--device"))
                .withThreads(Integer.parseInt(a.getOrDefault("--threads", "0")));
        Engine engine = Engine.open(opts);
        try {
            AttnModel m = engine.load(model, config);
            InetSocketAddress addr = new InetSocketAddress(
                    a.getOrDefault("--host", "127.0.0.1"), Integer.parseInt(a.getOrDefault("--port", "8080")));
            int maxBody = Integer.parseInt(a.getOrDefault("--max-body", String.valueOf(DEFAULT_MAX_BODY)));
            int workers = Math.max(4, Runtime.getRuntime().availableProcessors());
            return new EncodeService(m, addr, maxBody, workers, engine);
        } catch (IOException | RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    public static void main(String[] args) throws IOException {
        EncodeService s;
        try {
            s = launch(args);
        } catch (IllegalArgumentException | AttnException e) {
            System.err.println("encode-service: " + e.getMessage());
            System.exit(2);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(s::close, "encode-shutdown"));
        System.out.println("serving " + s.model.kind() + " (E=" + s.model.width() + ") on http://"
                + s.server.getAddress().getHostString() + ":" + s.port() + PATH);
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        List<String> known = List.of("--model", "--config", "--port", "--host", "--device", "--threads", "--max-body");
        for (int i = 0; i < args.length; i++) {
            if (!known.contains(args[i]) || i + 1 >= args.length)
                throw new IllegalArgumentException("usage: --model M.safetensors [--config C.json] [--port 8080]"
                        + " [--host 127.0.0.1] [--device auto|cpu|cuda] [--threads N] [--max-body BYTES]");
            a.put(args[i], args[++i]);
        }
        if (!a.containsKey("--model")) throw new IllegalArgumentException("--model is required");
        return a;
    }

    /** The port the service listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * Stops accepting connections, lets requests in progress finish (up to 5 s), stops the workers, and closes the
     * engine if the service opened it. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closing) return;
        closing = true;
        server.stop(5);
        workers.shutdown();
        try {
            if (!workers.awaitTermination(10, TimeUnit.SECONDS)) workers.shutdownNow();
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the engine failed", e);
            }
        }
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (!PATH.equals(ex.getRequestURI().getPath())) {
                error(ex, 404, "NOT_FOUND", "no such path; POST " + PATH);
                return;
            }
            if (!"POST".equals(ex.getRequestMethod())) {
                ex.getResponseHeaders().set("Allow", "POST");
                error(ex, 405, "METHOD_NOT_ALLOWED", "use POST");
                return;
            }
            if (closing) {
                error(ex, 503, "CLOSED", "the service is shutting down");
                return;
            }
            String type = contentType(ex);
            boolean npy = type.equals("application/x-npy");
            if (!npy && !type.equals("application/json")) {
                error(ex, 415, "UNSUPPORTED_MEDIA_TYPE", "send application/json or application/x-npy");
                return;
            }
            byte[] body = readBody(ex);
            if (body == null) {
                error(ex, 413, "TOO_LARGE", "request body over " + maxBody + " bytes");
                return;
            }
            try {
                Tensor x = npy ? Npy.read(body, "request body") : fromJson(body);
                if (!x.allFinite()) throw new AttnException(AttnException.Code.NON_FINITE, "input has NaN or Inf");
                Tensor y = model.encode(x);
                if (npy) send(ex, 200, "application/x-npy", Npy.toBytes(y));
                else send(ex, 200, "application/json", toJson(y));
            } catch (AttnException e) {
                int status =
                        switch (e.code()) {
                            case BAD_INPUT, SHAPE_MISMATCH, NON_FINITE -> 400;
                            case DEVICE_UNAVAILABLE, DEVICE_OUT_OF_MEMORY -> 503;
                            case INTERNAL -> 500;
                        };
                error(ex, status, e.code().name(), e.getMessage());
            } catch (IllegalStateException e) { // the model was closed under us
                error(ex, 503, "CLOSED", "the model is closed");
            }
        } catch (RuntimeException e) {
            // never let a handler die silently: the client would see a reset connection
            try {
                error(ex, 500, "INTERNAL", "internal error: " + e);
            } catch (IOException | RuntimeException ignored) {
                // the response was already under way
            }
        }
    }

    private static String contentType(HttpExchange ex) {
        String t = ex.getRequestHeaders().getFirst("Content-Type");
        if (t == null) return "application/json";
        int semi = t.indexOf(';');
        return (semi < 0 ? t : t.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }

    /** The body, or null when it is over the cap (checked before reading when Content-Length says so). */
    private byte[] readBody(HttpExchange ex) throws IOException {
        String len = ex.getRequestHeaders().getFirst("Content-Length");
        if (len != null) {
            try {
                if (Long.parseLong(len.trim()) > maxBody) return null;
            } catch (NumberFormatException e) {
                return null;
            }
        }
        try (InputStream in = ex.getRequestBody()) {
            byte[] b = in.readNBytes(maxBody + 1);
            return b.length > maxBody ? null : b;
        }
    }

    /** {@code {"shape":[...],"data":[...]}}, data flat and row-major. */
    private static Tensor fromJson(byte[] body) {
        Object v = Json.parse(new String(body, StandardCharsets.UTF_8), "request body");
        if (!(v instanceof Map<?, ?> m)
                || !(m.get("shape") instanceof List<?> shape)
                || !(m.get("data") instanceof List<?> data))
            throw AttnException.badInput("request body: expected {\"shape\":[B,L,E],\"data\":[...]}");
        for (Object k : m.keySet())
            if (!k.equals("shape") && !k.equals("data"))
                throw AttnException.badInput("request body: unknown key \"" + k + "\"");
        int[] dims = new int[shape.size()];
        for (int i = 0; i < dims.length; i++) {
            if (!(shape.get(i) instanceof Long d) || d < 0 || d > Integer.MAX_VALUE)
                throw AttnException.badInput("request body: shape must hold non-negative integers, got " + shape);
            dims[i] = (int) (long) d;
        }
        float[] f = new float[data.size()];
        for (int i = 0; i < f.length; i++) {
            if (!(data.get(i) instanceof Number n))
                throw AttnException.badInput("request body: data[" + i + "] is not a number");
            f[i] = n.floatValue();
        }
        return Tensor.of(f, dims);
    }

    private static byte[] toJson(Tensor y) {
        StringBuilder sb = new StringBuilder(16 + 12 * y.size()).append("{\"shape\":[");
        for (int i = 0; i < y.rank(); i++) sb.append(i == 0 ? "" : ",").append(y.dim(i));
        sb.append("],\"data\":[");
        float[] d = y.data();
        for (int i = 0; i < d.length; i++) {
            if (!Float.isFinite(d[i])) throw new AttnException(AttnException.Code.NON_FINITE, "output has NaN or Inf");
            sb.append(i == 0 ? "" : ",").append(d[i]); // Float.toString: the shortest decimal that reads back exactly
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void error(HttpExchange ex, int status, String code, String message) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("error", message);
        m.put("code", code);
        send(ex, status, "application/json", Json.write(m).getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
