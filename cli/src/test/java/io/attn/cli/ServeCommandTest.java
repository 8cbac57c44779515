package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.fixtures.TinyTextModel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn serve} as a process: SIGTERM with requests in flight answers them all and exits 0 (not the JVM's 143);
 * a model that cannot be loaded exits 3 with one line, before any port opens.
 */
class ServeCommandTest {
    @TempDir
    Path dir;

    static Process serve(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "--add-modules",
                "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "serve"));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    @Test
    void sigtermAnswersEveryRequestInFlightAndExitsZero() throws Exception {
        Path model = TinyTextModel.folder(dir, true);
        // batches wait 1 s to fill, so the requests below are in flight when the signal comes
        Process p = serve("--model", model.toString(), "--port", "0", "--device", "cpu", "--max-wait", "1000");
        StringBuilder log = new StringBuilder();
        int port = port(p, ".*", log);
        assertTrue(port > 0, "the server did not start:\n" + log);
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI uri = URI.create("http://127.0.0.1:" + port + "/v1/embeddings");
        List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
        for (int i = 0; i < 32; i++)
            inFlight.add(http.sendAsync(
                    HttpRequest.newBuilder(uri)
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"input\":\"the sky is blue " + i + "\"}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        // in flight = admitted by the server (queued in the batcher or running), as its metrics count them
        URI metrics = URI.create("http://127.0.0.1:" + port + "/metrics");
        for (int i = 0; i < 200 && admitted(http, metrics) < 32; i++) Thread.sleep(10);
        assertEquals(32, admitted(http, metrics), "the 32 requests were not all in flight");
        p.toHandle().destroy(); // SIGTERM (Process.destroy would also close the pipes we read)
        for (CompletableFuture<HttpResponse<String>> f : inFlight) {
            HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode(), r.body());
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the server did not stop");
        String rest = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), log + rest);
        assertTrue(rest.contains("attn: stopped"), rest);
    }

    /**
     * The port of server {@code p} once it says {@code serving SERVED on http://127.0.0.1:PORT} ({@code served} a regular
     * expression), its lines so far appended to {@code log}; -1 if it ends first.
     */
    static int port(Process p, String served, StringBuilder log) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Pattern started = Pattern.compile("serving " + served + " on http://127\\.0\\.0\\.1:(\\d+)");
        for (String line; (line = out.readLine()) != null; ) {
            log.append(line).append('\n');
            Matcher m = started.matcher(line);
            if (m.find()) return Integer.parseInt(m.group(1));
        }
        return -1;
    }

    static double admitted(HttpClient http, URI metrics) throws Exception {
        String text = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        return text.lines()
                .filter(l -> l.startsWith("attn_requests_admitted "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1)))
                .findFirst()
                .orElse(-1);
    }

    @Test
    void severalNamedModelsAreServedAndListed() throws Exception {
        Path model = TinyTextModel.folder(dir, true);
        Path reranker = Path.of("../tests/rerankers/bert-reranker");
        Process p = serve("--model", "emb=" + model, "--model", "rr=" + reranker, "--port", "0", "--device", "cpu");
        StringBuilder log = new StringBuilder();
        int port = port(p, "emb, rr", log);
        try {
            assertTrue(port > 0, "the server did not start:\n" + log);
            HttpClient http = HttpClient.newHttpClient();
            String models = http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/models"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            assertTrue(models.contains("\"id\":\"emb\"") && models.contains("\"id\":\"rr\""), models);
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/rerank"))
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"query\":\"q\",\"texts\":[\"a\",\"b\"]}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
        } finally {
            p.toHandle().destroy();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals(0, p.exitValue());
    }

    /**
     * {@code --task NAME=TASK} and {@code NAME=T1,T2}: one task LoRA folder (tests/families/jina-v3-hub) served under
     * two names, the second with two tasks (the second served as its own copy {@code NAME/T2}); a Jina request's {@code
     * task} picks the model, with or without the model's name; a task for a name not served is a usage error (exit 2)
     * before anything loads. The vectors themselves are judged by the server module's TaskServeTest.
     */
    @Test
    void eachServedNameTakesItsTask() throws Exception {
        String jina = Path.of("../tests/families/jina-v3-hub").toString();
        Process bad = serve("--model", "q=" + jina, "--task", "x=retrieval.query", "--port", "0", "--device", "cpu");
        assertTrue(bad.waitFor(60, TimeUnit.SECONDS));
        String err = new String(bad.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, bad.exitValue(), err);
        assertTrue(err.contains("no model is served as \"x\""), err);
        // q serves the query task; jina serves it too and, as its own copy jina/retrieval.passage, the passage task
        Process p = serve(
                "--model",
                "q=" + jina,
                "--model",
                "jina=" + jina,
                "--task",
                "q=retrieval.query",
                "--task",
                "jina=retrieval.query,retrieval.passage",
                "--port",
                "0",
                "--device",
                "cpu");
        StringBuilder log = new StringBuilder();
        int port = port(p, "q, jina, jina/retrieval.passage", log);
        try {
            assertTrue(port > 0, "the server did not start:\n" + log);
            HttpClient http = HttpClient.newHttpClient();
            // {model in the request or null, task} -> the model that answers
            String[][] cases = {
                {null, "retrieval.passage", "jina/retrieval.passage"},
                {null, "retrieval.query", "q"},
                {"jina", "retrieval.passage", "jina/retrieval.passage"},
                {"jina", "retrieval.query", "jina"}
            };
            for (String[] c : cases) {
                String body = "{\"input\":\"a query\",\"task\":\"" + c[1] + "\""
                        + (c[0] == null ? "" : ",\"model\":\"" + c[0] + "\"") + "}";
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/embeddings"))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.body().contains("\"model\":\"" + c[2] + "\""), body + " -> " + r.body());
            }
        } finally {
            p.toHandle().destroy();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aModelThatDoesNotLoadExits3BeforeListening() throws Exception {
        Process p = serve("--model", dir.resolve("missing").toString(), "--port", "0", "--device", "cpu");
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(3, p.exitValue(), out);
        List<String> lines = out.lines().filter(l -> l.startsWith("attn:")).toList();
        assertEquals(1, lines.size(), out);
        assertTrue(lines.get(0).contains("missing: no such file or directory"), out);
        assertTrue(!out.contains("serving"), out);
    }
}
