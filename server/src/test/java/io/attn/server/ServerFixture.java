package io.attn.server;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.fixtures.TinyTextModel;
import io.attn.text.EmbedderOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/** A server on a free loopback port over the tiny text model, and a client for it. */
final class ServerFixture implements AutoCloseable {
    final AttnServer server;
    final Path model;
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ServerFixture(Path dir, ServerOptions options) throws IOException {
        this(TinyTextModel.folder(dir, true), options, true);
    }

    /** A server over the model folder {@code model}. */
    ServerFixture(Path model, ServerOptions options, boolean given) {
        this.model = model;
        server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                model,
                EmbedderOptions.defaults(),
                options.withHost("127.0.0.1").withPort(0),
                "test");
    }

    /** A client for a server already started (it is closed with the fixture). */
    ServerFixture(AttnServer server, Path model) {
        this.model = model;
        this.server = server;
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.port() + path;
    }

    HttpResponse<String> post(String path, String json, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path)))
                .timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<byte[]> postBytes(String path, byte[] body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(url(path)))
                        .timeout(Duration.ofSeconds(30))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path)))
                .timeout(Duration.ofSeconds(30))
                .GET();
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends raw bytes on a fresh connection and returns what comes back until the server closes (or 5 s pass). */
    String raw(byte[] request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // the server may close before reading all of it; its answer is still there
            }
            InputStream in = s.getInputStream();
            java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) >= 0; ) got.write(buf, 0, n);
                return got.toString(StandardCharsets.ISO_8859_1) + "\n<closed>";
            } catch (java.net.SocketTimeoutException e) {
                return got.toString(StandardCharsets.ISO_8859_1) + "\n<open>";
            } catch (IOException e) {
                return got.toString(StandardCharsets.ISO_8859_1) + "\n<reset>";
            }
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
