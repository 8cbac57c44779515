package io.attn.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The encode service on 127.0.0.1, an ephemeral port: 8 concurrent clients post JSON and .npy requests and get
 * exactly (bitwise) what the library returns for the same input; bad requests get their 4xx with a JSON error; a
 * closed model gets 503; close stops the server.
 */
class EncodeServiceTest {
    static final int E = 16, CLIENTS = 8, PER_CLIENT = 20;
    static final String CONFIG =
            "{\"module\":\"TransformerEncoderLayer\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32}";

    @TempDir
    Path dir;

    final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    Path modelFile() {
        Path p = dir.resolve("enc.safetensors");
        SafeTensors.write(p, RandomStateDicts.encoderLayer(LayerConfig.of(E, 4, 32), 7), Map.of("config", CONFIG));
        return p;
    }

    @Test
    void concurrentClientsGetTheLibrarysAnswers() throws Exception {
        try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                AttnModel model = engine.load(modelFile());
                EncodeService service = EncodeService.start(
                        model, new InetSocketAddress("127.0.0.1", 0), EncodeService.DEFAULT_MAX_BODY, 8)) {
            URI uri = URI.create("http://127.0.0.1:" + service.port() + EncodeService.PATH);
            ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
            List<Future<Integer>> fs = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                fs.add(clients.submit(() -> {
                    for (int i = 0; i < PER_CLIENT; i++) {
                        int len = 1 + (client + i) % 6;
                        Tensor x = RandomStateDicts.uniform(client * 1000L + i, -1, 1, 2, len, E);
                        float[] want = model.encode(x).data();
                        if (i % 2 == 0) {
                            HttpResponse<byte[]> r = post(uri, "application/x-npy", Npy.toBytes(x));
                            assertEquals(200, r.statusCode(), () -> new String(r.body(), StandardCharsets.UTF_8));
                            Tensor y = Npy.read(r.body(), "response");
                            assertEquals(x.shape(), y.shape());
                            assertBitwise(want, y.data());
                        } else {
                            HttpResponse<byte[]> r = post(uri, "application/json", json(x));
                            assertEquals(200, r.statusCode(), () -> new String(r.body(), StandardCharsets.UTF_8));
                            Map<?, ?> m = (Map<?, ?>) Json.parse(new String(r.body(), StandardCharsets.UTF_8));
                            assertEquals(List.of(2L, (long) len, (long) E), m.get("shape"));
                            List<?> data = (List<?>) m.get("data");
                            float[] got = new float[data.size()];
                            for (int k = 0; k < got.length; k++) got[k] = ((Number) data.get(k)).floatValue();
                            assertBitwise(want, got);
                        }
                    }
                    return PER_CLIENT;
                }));
            }
            int done = 0;
            for (Future<Integer> f : fs) done += f.get(120, TimeUnit.SECONDS);
            clients.shutdown();
            assertEquals(CLIENTS * PER_CLIENT, done);
        }
    }

    @Test
    @SuppressWarnings("try") // the model is closed inside its try on purpose
    void badRequestsGetTheirStatusAndAJsonError() throws Exception {
        try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                AttnModel model = engine.load(modelFile());
                EncodeService service = EncodeService.start(model, new InetSocketAddress("127.0.0.1", 0), 4096, 2)) {
            String base = "http://127.0.0.1:" + service.port();
            URI uri = URI.create(base + EncodeService.PATH);
            Tensor wrongWidth = Tensor.zeros(1, 3, E + 1);
            assertError(post(uri, "application/json", json(wrongWidth)), 400, "SHAPE_MISMATCH");
            assertError(post(uri, "application/x-npy", Npy.toBytes(wrongWidth)), 400, "SHAPE_MISMATCH");
            assertError(
                    post(uri, "application/json", bytes("{\"shape\":[1,2,16],\"data\":[1,2]}")), 400, "SHAPE_MISMATCH");
            assertError(post(uri, "application/json", bytes("{\"shape\":[1,2,16]")), 400, "BAD_INPUT");
            assertError(
                    post(uri, "application/json", bytes("{\"shape\":[1,1,16],\"data\":[\"x\"]}")), 400, "BAD_INPUT");
            assertError(post(uri, "application/x-npy", bytes("not an npy file")), 400, "BAD_INPUT");
            assertError(post(uri, "text/plain", bytes("hello")), 415, "UNSUPPORTED_MEDIA_TYPE");
            assertError(post(uri, "application/x-npy", new byte[5000]), 413, "TOO_LARGE");
            HttpResponse<byte[]> get =
                    http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
            assertError(get, 405, "METHOD_NOT_ALLOWED");
            assertEquals("POST", get.headers().firstValue("Allow").orElse(""));
            assertError(post(URI.create(base + "/v1/other"), "application/json", json(wrongWidth)), 404, "NOT_FOUND");
            // the service still answers good requests after all of that
            Tensor x = RandomStateDicts.uniform(3, -1, 1, 3, E);
            HttpResponse<byte[]> ok = post(uri, "application/x-npy", Npy.toBytes(x));
            assertEquals(200, ok.statusCode());
            assertBitwise(
                    model.encode(x).data(), Npy.read(ok.body(), "response").data());
            // a closed model: 503
            model.close();
            assertError(post(uri, "application/x-npy", Npy.toBytes(x)), 503, "CLOSED");
        }
    }

    @Test
    @SuppressWarnings("try") // closed twice on purpose
    void launchedFromTheCommandLineAndClosedCleanly() throws Exception {
        EncodeService service = EncodeService.launch(
                "--model", modelFile().toString(), "--port", "0", "--host", "127.0.0.1", "--device", "cpu");
        URI uri = URI.create("http://127.0.0.1:" + service.port() + EncodeService.PATH);
        HttpResponse<byte[]> r = post(uri, "application/json", bytes("{\"shape\":[1,16],\"data\":" + zeros(E) + "}"));
        assertEquals(200, r.statusCode(), () -> new String(r.body(), StandardCharsets.UTF_8));
        service.close();
        service.close();
        assertThrows(IOException.class, () -> post(uri, "application/json", bytes("{}")));
        assertThrows(IllegalArgumentException.class, () -> EncodeService.launch("--port", "0"));
    }

    HttpResponse<byte[]> post(URI uri, String type, byte[] body) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(uri)
                        .header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    static void assertError(HttpResponse<byte[]> r, int status, String code) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(status, r.statusCode(), body);
        Map<?, ?> m = (Map<?, ?>) Json.parse(body);
        assertEquals(code, m.get("code"), body);
        assertTrue(m.get("error") instanceof String s && !s.isBlank(), body);
    }

    static byte[] json(Tensor x) {
        List<Object> data = new ArrayList<>();
        for (float f : x.data()) data.add((double) f);
        List<Object> shape = new ArrayList<>();
        for (int d : x.shape().dims()) shape.add(d);
        return bytes(Json.write(Map.of("shape", shape, "data", data)));
    }

    static String zeros(int n) {
        return "[" + "0,".repeat(n - 1) + "0]";
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void assertBitwise(float[] want, float[] got) {
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++)
            assertEquals(Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(got[i]), "element " + i);
    }
}
