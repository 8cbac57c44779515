package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.server.AttnServer;
import io.attn.server.ServerOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn bench serve}: a load generator. N clients (virtual threads sharing one keep-alive HTTP client) each
 * send one request at a time for a fixed time, texts taken in turn from a file; it prints requests/s, sentences/s,
 * latency percentiles and errors, and as its last line one JSON object. With {@code --model} it starts the server in
 * this process first (on a free loopback port, with the given batching), so batching on and off can be compared.
 */
@Command(name = "serve", description = "Load an embedding server with N concurrent clients; JSON summary last.")
final class BenchServe implements Callable<Integer> {
    @Option(names = "--url", description = "Server to load (default: ${DEFAULT-VALUE}); ignored with --model.")
    String url = "http://127.0.0.1:8080";

    @Option(names = "--model", paramLabel = "DIR", description = "Start this model's server in-process and load it.")
    Path model;

    @Option(names = "--input", required = true, paramLabel = "FILE", description = ".txt or .jsonl texts to send.")
    Path input;

    @Option(names = "--clients", description = "Concurrent clients (default: ${DEFAULT-VALUE}).")
    int clients = 64;

    @Option(names = "--seconds", description = "Duration after the warm-up (default: ${DEFAULT-VALUE}).")
    double seconds = 10;

    @Option(
            names = "--warmup",
            paramLabel = "SECONDS",
            description = "Load sent but not counted first, while the JIT compiles the kernels (default:"
                    + " ${DEFAULT-VALUE}; more on a loaded machine, where it compiles slower).")
    double warmup = 2;

    @Option(names = "--texts-per-request", description = "Texts in each request (default: ${DEFAULT-VALUE}).")
    int perRequest = 1;

    @Option(names = "--endpoint", description = "openai or tei (default: ${DEFAULT-VALUE}).")
    String endpoint = "openai";

    @Option(names = "--api-key", paramLabel = "KEY", description = "Bearer token to send.")
    String apiKey;

    @Option(names = "--max-batch-tokens", paramLabel = "N", description = "With --model: tokens per forward pass.")
    int maxBatchTokens = ServerOptions.defaults().maxBatchTokens();

    @Option(names = "--max-wait", paramLabel = "MS", description = "With --model: batch fill wait (ms).")
    int maxWait = ServerOptions.defaults().maxWaitMillis();

    @Option(names = "--no-batching", description = "With --model: one request per forward pass.")
    boolean noBatching;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() throws Exception {
        List<String> texts = new ArrayList<>();
        try (TextLines in = TextLines.open(input, "text")) {
            for (List<String> c; !(c = in.next()).isEmpty() && texts.size() < 1_000_000; ) texts.addAll(c);
        }
        if (texts.isEmpty()) throw AttnException.badInput(input + ": no texts");
        if (!endpoint.equals("openai") && !endpoint.equals("tei"))
            throw AttnException.badInput("--endpoint must be openai or tei");
        AttnServer server = null;
        String base = url;
        if (model != null) {
            ServerOptions o = ServerOptions.defaults()
                    .withPort(0)
                    .withBatching(noBatching ? 1 : maxBatchTokens, noBatching ? 0 : maxWait)
                    .withMaxQueuedRequests(Math.max(256, 2 * clients));
            server = AttnServer.start(
                    Engine.open(device.engineOptions()), model, new EmbedOptions().options(), o, "bench");
            base = "http://127.0.0.1:" + server.port();
        }
        try {
            return load(base, texts);
        } finally {
            if (server != null) server.close();
        }
    }

    private int load(String base, List<String> texts) throws Exception {
        HttpClient http = HttpClient.newBuilder()
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        URI uri = URI.create(base + (endpoint.equals("openai") ? "/v1/embeddings" : "/embed"));
        AtomicLong next = new AtomicLong(), errors = new AtomicLong(), ok = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<String> firstError =
                new java.util.concurrent.atomic.AtomicReference<>();
        // the body of an error is kept (the first one is shown), a 200's is discarded
        HttpResponse.BodyHandler<String> handler = info -> info.statusCode() == 200
                ? HttpResponse.BodySubscribers.replacing(null)
                : HttpResponse.BodySubscribers.ofString(java.nio.charset.StandardCharsets.UTF_8);
        List<long[]> latencies = new ArrayList<>();
        if (!(warmup >= 0) || !(seconds > 0)) throw AttnException.badInput("--warmup must be >= 0 and --seconds > 0");
        long warmEnd = System.nanoTime() + (long) (warmup * 1e9);
        long end = warmEnd + (long) (seconds * 1e9);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < clients; c++) {
                long[] mine = new long[1 << 16];
                synchronized (latencies) {
                    latencies.add(mine);
                }
                pool.submit(() -> {
                    int n = 0;
                    while (System.nanoTime() < end) {
                        // no "model": the server answers with its first embedding model (a name it does not serve
                        // would be 404)
                        StringBuilder b =
                                new StringBuilder(endpoint.equals("openai") ? "{\"input\":[" : "{\"inputs\":[");
                        for (int i = 0; i < perRequest; i++)
                            b.append(i == 0 ? "" : ",")
                                    .append(json(texts.get((int) (next.getAndIncrement() % texts.size()))));
                        HttpRequest.Builder r = HttpRequest.newBuilder(uri)
                                .timeout(Duration.ofSeconds(60))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        b.append("]}").toString()));
                        if (apiKey != null) r.header("authorization", "Bearer " + apiKey);
                        long s = System.nanoTime();
                        boolean good;
                        try {
                            HttpResponse<String> a = http.send(r.build(), handler);
                            good = a.statusCode() == 200;
                            if (!good) firstError.compareAndSet(null, "HTTP " + a.statusCode() + " " + a.body());
                        } catch (Exception e) {
                            good = false;
                            firstError.compareAndSet(null, e.toString());
                        }
                        long t = System.nanoTime();
                        if (s < warmEnd) continue;
                        if (!good) errors.incrementAndGet();
                        else {
                            ok.incrementAndGet();
                            if (n < mine.length) mine[n++] = t - s;
                        }
                    }
                    mine[mine.length - 1] = n; // the count, in the last slot
                    return null;
                });
            }
        }
        List<Long> all = new ArrayList<>();
        for (long[] l : latencies) for (int i = 0; i < (int) l[l.length - 1]; i++) all.add(l[i]);
        long[] sorted = all.stream().mapToLong(Long::longValue).sorted().toArray();
        double rps = ok.get() / seconds, sps = rps * perRequest;
        String cpu = io.attn.engine.Devices.hostCpu();
        System.out.printf(
                Locale.ROOT,
                "bench serve %s: %d clients, %d text(s) per request, %.0f s; %s%n",
                uri,
                clients,
                perRequest,
                seconds,
                cpu);
        System.out.printf(
                Locale.ROOT,
                "  %.1f requests/s, %.1f sentences/s, latency p50 %.1f ms, p95 %.1f ms, p99 %.1f" + " ms, %d errors%n",
                rps,
                sps,
                pct(sorted, 50),
                pct(sorted, 95),
                pct(sorted, 99),
                errors.get());
        System.out.printf(
                Locale.ROOT,
                "{\"bench\":\"serve\",\"clients\":%d,\"texts_per_request\":%d,\"seconds\":%.1f,"
                        + "\"requests_per_s\":%.2f,\"sentences_per_s\":%.2f,\"p50_ms\":%.2f,\"p95_ms\":%.2f,"
                        + "\"p99_ms\":%.2f,\"errors\":%d,\"cpu\":%s}%n",
                clients,
                perRequest,
                seconds,
                rps,
                sps,
                pct(sorted, 50),
                pct(sorted, 95),
                pct(sorted, 99),
                errors.get(),
                io.attn.engine.Devices.hostCpuJson());
        if (firstError.get() != null)
            System.err.println("attn: " + errors.get() + " requests failed; the first: "
                    + firstError.get().lines().findFirst().orElse(""));
        return 0;
    }

    private static double pct(long[] sorted, int p) {
        if (sorted.length == 0) return Double.NaN;
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
