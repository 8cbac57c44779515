package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Draining (issue 36's defect): every request the server has received before the shutdown starts is answered from the
 * model within the drain timeout, however far it had got (queued in the kernel, parsed, admitted, batched); only
 * connections and requests that come after it get 503. The requests are written whole on their own connections, and
 * the shutdown ({@link AttnServer#close}, what SIGTERM runs) starts the moment the last write returns, without waiting
 * for the server to have taken any of them.
 */
class DrainTest {
    @TempDir
    Path dir;

    static String request(String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\n\r\n" + json;
    }

    /** Reads one HTTP response's status code (the server closes the connection after answering while draining). */
    static int status(Socket s) throws IOException {
        s.setSoTimeout(60_000);
        InputStream in = s.getInputStream();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) >= 0; ) {
            got.write(buf, 0, n);
            String t = got.toString(StandardCharsets.ISO_8859_1);
            int head = t.indexOf("\r\n\r\n");
            if (head > 0) {
                int cl = t.toLowerCase().indexOf("content-length: ");
                if (cl > 0 && cl < head) {
                    int len = Integer.parseInt(
                            t.substring(cl + 16, t.indexOf("\r\n", cl)).trim());
                    if (t.length() >= head + 4 + len) break;
                }
            }
        }
        String t = got.toString(StandardCharsets.ISO_8859_1);
        assertTrue(t.startsWith("HTTP/1.1 "), "no answer: " + t);
        return Integer.parseInt(t.substring(9, 12));
    }

    @Test
    void everyRequestReceivedBeforeTheShutdownIsAnsweredFromTheModel() throws Exception {
        String longText = "the quick brown fox jumps over the lazy dog ".repeat(40);
        String json = "{\"input\":[\"" + longText + "\",\"" + longText + " a\",\"" + longText + " b\",\"" + longText
                + " c\"]}";
        byte[] req = request(json).getBytes(StandardCharsets.UTF_8);
        ServerOptions o = ServerOptions.defaults().withBatching(512, 5);
        for (int round = 0; round < 3; round++) {
            try (ServerFixture s = new ServerFixture(dir.resolve("r" + round), o)) {
                List<Socket> sockets = new ArrayList<>();
                try {
                    for (int i = 0; i < 32; i++) sockets.add(new Socket("127.0.0.1", s.server.port()));
                    // accepted by the server: received (a connection still in the kernel's backlog is not yet)
                    for (int i = 0; i < 1000 && s.server.connectionsForTest() < 32; i++) Thread.sleep(2);
                    assertEquals(32, s.server.connectionsForTest());
                    for (Socket c : sockets) {
                        c.getOutputStream().write(req);
                        c.getOutputStream().flush();
                    }
                    long start = System.nanoTime();
                    CompletableFuture<Void> closing = CompletableFuture.runAsync(s.server::close);
                    List<Integer> statuses = new ArrayList<>();
                    for (Socket c : sockets) statuses.add(status(c));
                    closing.get(60, TimeUnit.SECONDS);
                    for (int i = 0; i < statuses.size(); i++)
                        assertEquals(200, statuses.get(i), "round " + round + ", request " + i + ": " + statuses);
                    assertTrue(
                            System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(o.drainTimeoutMillis()),
                            "took longer than the drain timeout");
                } finally {
                    for (Socket c : sockets) c.close();
                }
            }
        }
    }

    @Test
    void requestsAfterTheShutdownStartsGet503() throws Exception {
        ServerOptions o = ServerOptions.defaults().withBatching(512, 1000); // a batch waits 1 s: the drain lasts
        try (ServerFixture s = new ServerFixture(dir, o)) {
            Socket early = new Socket("127.0.0.1", s.server.port());
            early.getOutputStream()
                    .write(request("{\"input\":\"the sky is blue\"}").getBytes(StandardCharsets.UTF_8));
            // wait until it is admitted, so that the drain has something to wait for
            for (int i = 0; i < 500 && s.server.admittedForTest() == 0; i++) Thread.sleep(2);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(s.server::close);
            for (int i = 0; i < 500 && !s.server.drainingForTest(); i++) Thread.sleep(2);
            try (Socket late = new Socket("127.0.0.1", s.server.port())) {
                late.getOutputStream().write(request("{\"input\":\"late\"}").getBytes(StandardCharsets.UTF_8));
                assertEquals(503, status(late));
            }
            assertEquals(200, status(early));
            early.close();
            closing.get(60, TimeUnit.SECONDS);
        }
    }
}
