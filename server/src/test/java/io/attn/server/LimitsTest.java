package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each limit and error of the server, each test failing if its limit were removed: status, the JSON error body
 * ({@code {"error": {"message", "type", "code"}}}), the headers that go with it, and a closed connection where the
 * transport was broken.
 */
class LimitsTest {
    @TempDir
    Path dir;

    static void error(HttpResponse<String> r, int status, String code) {
        assertEquals(status, r.statusCode(), r.body());
        JsonObject e = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("error");
        assertEquals(code, e.get("code").getAsString(), r.body());
        assertFalse(e.get("message").getAsString().isEmpty());
        assertTrue(e.has("type"), r.body());
        assertFalse(r.body().contains("Exception") || r.body().contains("\tat "), "a stack trace leaked: " + r.body());
    }

    @Test
    void strictJsonAndTypes() throws Exception {
        try (ServerFixture s = new ServerFixture(dir, ServerOptions.defaults())) {
            error(s.post("/v1/embeddings", "{\"input\":\"a\"} trailing"), 400, "invalid_json");
            error(s.post("/v1/embeddings", "{\"input\":\"a\""), 400, "invalid_json");
            error(s.post("/v1/embeddings", "[\"a\"]"), 400, "invalid_json");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"input\":\"b\"}"), 400, "duplicate_parameter");
            error(s.post("/v1/embeddings", "{\"input\":3}"), 400, "invalid_type");
            error(s.post("/v1/embeddings", "{\"input\":[\"a\",null]}"), 400, "invalid_type");
            error(s.post("/v1/embeddings", "{\"input\":[1,2,3]}"), 400, "invalid_type");
            error(s.post("/v1/embeddings", "{\"input\":[]}"), 400, "invalid_value");
            error(s.post("/v1/embeddings", "{\"model\":\"m\"}"), 400, "missing_parameter");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"temperature\":1}"), 400, "unknown_parameter");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"dimensions\":NaN}"), 400, "invalid_json");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"dimensions\":17}"), 400, "invalid_value");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"dimensions\":0}"), 400, "invalid_value");
            error(s.post("/v1/embeddings", "{\"input\":\"a\",\"encoding_format\":\"int8\"}"), 400, "invalid_value");
            error(s.post("/v1/embeddings", "{\"input\":\"\\ud800\"}"), 400, "invalid_input"); // a lone surrogate
            error(s.post("/embed", "{\"inputs\":\"a\",\"normalize\":\"yes\"}"), 400, "invalid_type");
            error(s.post("/v1/encode", "{\"shape\":[1,16]}"), 404, "not_found"); // a text model serves no tensors
            // invalid UTF-8, and a UTF-8-encoded surrogate (ED A0 80), which is not valid UTF-8 either
            for (byte[] bad : new byte[][] {
                {'{', '"', 'i', 'n', 'p', 'u', 't', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'},
                {'{', '"', 'i', 'n', 'p', 'u', 't', '"', ':', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', '}'}
            }) {
                HttpResponse<byte[]> r = s.postBytes("/v1/embeddings", bad);
                assertEquals(400, r.statusCode());
                assertTrue(new String(r.body(), StandardCharsets.UTF_8).contains("invalid_utf8"));
            }
            error(s.get("/v1/embeddings"), 405, "method_not_allowed");
            error(s.get("/nothing"), 404, "not_found");
            // and afterwards it still answers
            assertEquals(
                    200, s.post("/v1/embeddings", "{\"input\":\"the sky\"}").statusCode());
        }
    }

    @Test
    void apiKeyIsRequiredExceptForHealth() throws Exception {
        try (ServerFixture s = new ServerFixture(dir, ServerOptions.defaults().withApiKey("s3cret"))) {
            HttpResponse<String> r = s.post("/v1/embeddings", "{\"input\":\"a\"}");
            error(r, 401, "invalid_api_key");
            assertEquals("Bearer", r.headers().firstValue("www-authenticate").orElse(""));
            error(
                    s.post("/v1/embeddings", "{\"input\":\"a\"}", "authorization", "Bearer s3cre"),
                    401,
                    "invalid_api_key");
            error(s.get("/metrics"), 401, "invalid_api_key");
            assertEquals(
                    200,
                    s.post("/v1/embeddings", "{\"input\":\"a\"}", "authorization", "Bearer s3cret")
                            .statusCode());
            assertEquals(200, s.get("/health").statusCode());
        }
    }

    @Test
    void requestSizeLimits() throws Exception {
        ServerOptions o = ServerOptions.defaults().withRequestLimits(100, 40, 64 << 10);
        try (ServerFixture s = new ServerFixture(dir, o)) {
            StringBuilder many = new StringBuilder("{\"input\":[");
            for (int i = 0; i < 101; i++) many.append(i == 0 ? "" : ",").append("\"a\"");
            error(s.post("/v1/embeddings", many.append("]}").toString()), 413, "too_many_inputs");
            StringBuilder tokens = new StringBuilder("{\"input\":[");
            for (int i = 0; i < 10; i++)
                tokens.append(i == 0 ? "" : ",").append("\"the sky is blue\""); // 6 tokens each
            error(s.post("/v1/embeddings", tokens.append("]}").toString()), 413, "too_many_tokens");
            // a body over the limit, declared by Content-Length: refused before it is read, connection closed
            long t0 = System.nanoTime();
            String out = s.raw(("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 1000000000\r\n\r\n{\"input\":")
                    .getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 413"), out);
            assertTrue(out.toLowerCase().contains("connection: close"), out);
            assertTrue(out.endsWith("<closed>"), out);
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), "413 was not at once");
            // a chunked body that grows past the limit while it arrives
            StringBuilder chunked = new StringBuilder("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: "
                    + "application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
            String chunk = "x".repeat(16 << 10);
            for (int i = 0; i < 6; i++)
                chunked.append(Integer.toHexString(chunk.length()))
                        .append("\r\n")
                        .append(chunk)
                        .append("\r\n");
            chunked.append("0\r\n\r\n");
            out = s.raw(chunked.toString().getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 413"), out.substring(0, Math.min(200, out.length())));
        }
    }

    @Test
    void transportErrorsGetA4xxAndAClosedConnection() throws Exception {
        try (ServerFixture s = new ServerFixture(dir, ServerOptions.defaults())) {
            String out = s.raw(("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(70 << 10) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 431"), out.substring(0, Math.min(200, out.length())));
            assertTrue(out.endsWith("<closed>"), out);
            out = s.raw("GARBAGE\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 400"), out);
            assertTrue(out.endsWith("<closed>"), out);
            out = s.raw(("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 400"), out);
            out = s.raw(("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nab\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertTrue(out.startsWith("HTTP/1.1 400"), out);
            assertEquals(200, s.get("/health").statusCode());
        }
    }

    @Test
    void aFullServerAnswers429WithRetryAfter() throws Exception {
        // no minimum data rate here: the slow request must hold its place however long a loaded machine takes
        ServerOptions o = ServerOptions.defaults().withMaxQueuedRequests(1);
        o = o.withTimeouts(o.idleTimeoutMillis(), 0, o.requestTimeoutMillis(), o.drainTimeoutMillis());
        try (ServerFixture s = new ServerFixture(dir, o)) {
            // a request admitted but still sending its body holds the one place
            Socket slow = slowRequest(s);
            HttpResponse<String> r = null;
            try {
                for (int i = 0; i < 500; i++) { // until the slow request has been admitted
                    if (slow.getInputStream().available() > 0) {
                        // it came while a request below held the place, and was refused itself: send it again
                        slow.close();
                        slow = slowRequest(s);
                    }
                    r = s.post("/v1/embeddings", "{\"input\":\"a\"}");
                    if (r.statusCode() == 429) break;
                    Thread.sleep(20);
                }
            } finally {
                slow.close();
            }
            error(r, 429, "too_many_requests");
            assertEquals("1", r.headers().firstValue("retry-after").orElse(""));
            // its body was not read: the connection is closed after the answer, which says so
            assertEquals("close", r.headers().firstValue("connection").orElse(""));
        }
    }

    /** A POST whose headers and first 9 of 40 body bytes are sent, the rest never. */
    private static Socket slowRequest(ServerFixture s) throws IOException {
        Socket slow = new Socket("127.0.0.1", s.server.port());
        OutputStream out = slow.getOutputStream();
        out.write(("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 40\r\n\r\n{\"input\":")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return slow;
    }

    @Test
    void aBodyThatArrivesTooSlowlyIsCutOff() throws Exception {
        try (ServerFixture s = new ServerFixture(dir, ServerOptions.defaults());
                Socket slow = new Socket("127.0.0.1", s.server.port())) {
            slow.setSoTimeout(10_000);
            OutputStream out = slow.getOutputStream();
            out.write(("POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 100\r\n\r\n{")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            String answer = "";
            try {
                for (int i = 0; i < 8; i++) { // one byte a second, far under the 1024 bytes/s minimum
                    Thread.sleep(1000);
                    out.write(' ');
                    out.flush();
                }
            } catch (java.io.IOException closed) {
                // the server closed the connection
            }
            answer = new String(slow.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1); // until closed
            assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
            assertTrue(answer.contains("request_timeout"), answer);
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(9), "the slow body was not cut off");
        }
    }

    @Test
    void slowClientsDoNotDelayOthers() throws Exception {
        slowClients(dir, 100, 3);
    }

    /**
     * {@code n} clients sending a request header one byte a second; beside them a normal request, once a second for
     * {@code rounds} seconds, is answered within 1 s.
     */
    static void slowClients(Path dir, int n, int rounds) throws Exception {
        try (ServerFixture s = new ServerFixture(dir, ServerOptions.defaults())) {
            List<Socket> slow = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    Socket c = new Socket("127.0.0.1", s.server.port());
                    c.getOutputStream().write("POST /v1/embeddings HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII));
                    slow.add(c);
                }
                long worst = 0;
                for (int round = 0; round < rounds; round++) {
                    for (Socket c : slow) c.getOutputStream().write('s'); // a header byte a second
                    long t0 = System.nanoTime();
                    assertEquals(
                            200,
                            s.post("/v1/embeddings", "{\"input\":\"the sky is blue\"}")
                                    .statusCode());
                    long ms = (System.nanoTime() - t0) / 1_000_000;
                    assertTrue(ms < 1000, "a normal request took " + ms + " ms beside " + n + " slow clients");
                    worst = Math.max(worst, ms);
                    Thread.sleep(1000);
                }
                System.out.printf("LimitsTest: %d slow clients, slowest normal request %d ms%n", n, worst);
            } finally {
                for (Socket c : slow) c.close();
            }
        }
    }

    @Test
    void aRequestPastItsDeadlineGets503() throws Exception {
        // batches wait 300 ms to fill; a request's deadline is 50 ms
        ServerOptions o = ServerOptions.defaults().withBatching(4096, 300).withTimeouts(30_000, 1024, 50, 1000);
        try (ServerFixture s = new ServerFixture(dir, o)) {
            error(s.post("/v1/embeddings", "{\"input\":\"the sky\"}"), 503, "timeout");
            assertEquals(200, s.get("/health").statusCode());
        }
    }
}
