package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import java.lang.management.ManagementFactory;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short forms of the load goals, bounded in time and on loopback: hostile requests of every kind get a 4xx JSON
 * error and leave the heap as it was and the server answering; a load of several times what the server admits gets
 * only 200s and 429s, never a 5xx or a connection closed without a status.
 */
class LoadTest {
    @TempDir
    Path dir;

    @Test
    void hostileRequestsGet4xxJsonAndTheServerStaysWell() throws Exception {
        hostileRequests(dir, 1000);
    }

    /** {@code n} hostile requests from 8 clients: each a 4xx JSON error; then a normal answer, the heap as before. */
    static void hostileRequests(Path dir, int n) throws Exception {
        ServerOptions o = ServerOptions.defaults().withRequestLimits(1000, 10_000, 256 << 10);
        try (ServerFixture s = new ServerFixture(dir, o)) {
            s.post("/v1/embeddings", "{\"input\":\"warm\"}");
            long heapBefore = heap();
            SplittableRandom r = new SplittableRandom(7);
            Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<java.util.concurrent.Future<?>> fs = new java.util.ArrayList<>();
                for (int i = 0; i < n; i++) {
                    byte[] body = hostile(r.split());
                    fs.add(pool.submit(() -> {
                        HttpResponse<byte[]> resp = s.postBytes("/v1/embeddings", body);
                        statuses.computeIfAbsent(resp.statusCode(), k -> new AtomicInteger())
                                .incrementAndGet();
                        String text = new String(resp.body(), StandardCharsets.UTF_8);
                        assertTrue(
                                resp.statusCode() >= 400 && resp.statusCode() < 500,
                                resp.statusCode() + " for " + new String(body, StandardCharsets.UTF_8) + ": " + text);
                        JsonParser.parseString(text)
                                .getAsJsonObject()
                                .getAsJsonObject("error")
                                .get("code");
                        return null;
                    }));
                }
                for (var f : fs) f.get();
            } finally {
                pool.shutdownNow();
            }
            System.out.println("LoadTest hostile statuses: " + new TreeMap<>(statuses));
            HttpResponse<String> ok = s.post("/v1/embeddings", "{\"input\":\"the sky is blue\"}");
            assertEquals(200, ok.statusCode(), ok.body());
            long growth = heap() - heapBefore;
            System.out.printf("LoadTest: %d hostile requests, heap growth %.1f MB%n", n, growth / 1e6);
            assertTrue(growth < 16 << 20, "heap grew by " + growth / 1e6 + " MB over " + n + " hostile requests");
        }
    }

    /** One of: bad JSON, wrong types, huge arrays, invalid UTF-8, missing fields, NaN, unknown fields, deep nesting. */
    static byte[] hostile(SplittableRandom r) {
        String s =
                switch (r.nextInt(12)) {
                    case 0 -> "{\"input\":";
                    case 1 -> "{\"input\":\"a\"}}";
                    case 2 -> "{\"input\":{\"a\":1}}";
                    case 3 -> "{\"input\":[" + "\"a\",".repeat(1000 + r.nextInt(5000)) + "\"a\"]}";
                    case 4 -> "{\"input\":NaN}";
                    case 5 -> "{\"model\":\"x\"}";
                    case 6 -> "{\"input\":\"a\",\"dimensions\":-1}";
                    case 7 -> "[".repeat(1 + r.nextInt(10_000)) + "]".repeat(r.nextInt(100));
                    case 8 -> "{\"input\":[\"a\"],\"extra\":true}";
                    case 9 -> "{\"input\":\"a\",\"encoding_format\":5}";
                    case 10 -> "{\"input\":[[1,2],[3]]}";
                    default -> null;
                };
        if (s != null) return s.getBytes(StandardCharsets.UTF_8);
        byte[] b = new byte[1 + r.nextInt(200)];
        r.nextBytes(b);
        b[0] = (byte) 0xFF; // never valid UTF-8
        return b;
    }

    @Test
    void overloadGetsOnly200sAnd429s() throws Exception {
        overload(dir, 48, 4); // 6x what is admitted
    }

    /**
     * {@code clients} clients against 8 admission places for {@code seconds}: only 200s and 429s, no connection lost
     * without a status; returns the process's largest resident set seen (bytes), sampled each second.
     */
    static long overload(Path dir, int clients, int seconds) throws Exception {
        ServerOptions o = ServerOptions.defaults().withMaxQueuedRequests(8);
        try (ServerFixture s = new ServerFixture(dir, o)) {
            Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
            AtomicInteger failures = new AtomicInteger();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long rss = 0;
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int c = 0; c < clients; c++)
                    pool.submit(() -> {
                        while (System.nanoTime() < end) {
                            try {
                                int st = s.post("/v1/embeddings", "{\"input\":[\"the sky is blue\",\"a cat sat\"]}")
                                        .statusCode();
                                statuses.computeIfAbsent(st, k -> new AtomicInteger())
                                        .incrementAndGet();
                            } catch (Exception e) {
                                if (failures.incrementAndGet() <= 3) System.out.println("LoadTest overload: lost " + e);
                            }
                        }
                    });
                while (System.nanoTime() < end) {
                    rss = Math.max(rss, rss());
                    Thread.sleep(1000);
                }
            }
            System.out.printf(
                    "LoadTest overload: %d clients, %d s, statuses %s, peak RSS %.0f MB%n",
                    clients, seconds, new TreeMap<>(statuses), rss / 1e6);
            assertEquals(0, failures.get(), "connections lost without a status");
            assertTrue(statuses.keySet().stream().allMatch(k -> k == 200 || k == 429), statuses.toString());
            assertTrue(statuses.containsKey(200) && statuses.containsKey(429), statuses.toString());
            return rss;
        }
    }

    /** This process's resident set (Linux), 0 where unknown. */
    static long rss() {
        try {
            for (String l : java.nio.file.Files.readAllLines(Path.of("/proc/self/status")))
                if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
        } catch (java.io.IOException | NumberFormatException e) {
            // not Linux
        }
        return 0;
    }

    static long heap() {
        for (int i = 0; i < 3; i++) System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
