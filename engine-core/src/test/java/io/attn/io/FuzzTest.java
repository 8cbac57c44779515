package io.attn.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random corruption of valid files: every reader must either return a result or throw a BAD_INPUT
 * {@link AttnException}; any other exception (or an OutOfMemoryError) fails the test.
 */
class FuzzTest {
    @TempDir
    Path dir;

    interface Reader {
        void read(byte[] b) throws Exception;
    }

    private static void fuzz(byte[] valid, int rounds, long seed, Reader r) {
        Random rnd = new Random(seed);
        for (int i = 0; i < rounds; i++) {
            byte[] b = valid.clone();
            int edits = 1 + rnd.nextInt(4);
            for (int k = 0; k < edits; k++) {
                int at = rnd.nextInt(b.length);
                b[at] = switch (rnd.nextInt(4)) {
                    case 0 -> (byte) rnd.nextInt(256);
                    case 1 -> (byte) (b[at] ^ (1 << rnd.nextInt(8)));
                    case 2 -> (byte) '9';
                    default -> (byte) 0xff;
                };
            }
            try {
                r.read(b);
            } catch (AttnException e) {
                assertEquals(AttnException.Code.BAD_INPUT, e.code(), e.getMessage());
            } catch (Throwable t) {
                fail("round " + i + ": " + t, t);
            }
        }
    }

    private static Map<String, Tensor> sample() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("a", Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3));
        m.put("b", Tensor.of(new float[] {7}, 1));
        return m;
    }

    @Test
    void npy() {
        byte[] v = Npy.toBytes(sample().get("a"));
        fuzz(v, 5000, 1, b -> Npy.read(b, "f.npy"));
        fuzz(v, 1000, 2, b -> Npy.read(new ByteArrayInputStream(b), b.length, "f.npy"));
    }

    @Test
    void safetensors() {
        byte[] v = SafeTensors.toBytes(sample(), Map.of("config", "{\"a\": [1, 2]}"));
        fuzz(v, 5000, 3, b -> SafeTensors.read(b, "f.safetensors"));
    }

    @Test
    void npz() throws IOException {
        for (boolean compress : new boolean[] {false, true}) {
            Path good = dir.resolve("good.npz");
            Npz.write(good, sample(), compress);
            Path p = dir.resolve("f.npz");
            fuzz(Files.readAllBytes(good), 400, compress ? 4 : 5, b -> {
                Files.write(p, b);
                Npz.read(p);
            });
        }
    }

    @Test
    void wordVectorsAndJson() {
        byte[] wv = "3 2\nthe 0.1 -2e3\ncaf\u00e9 1 2\nx 3 4\n".getBytes(StandardCharsets.UTF_8);
        fuzz(wv, 3000, 6, b -> WordVectors.load(new ByteArrayInputStream(b), "f.txt"));
        byte[] js = "{\"a\": [1, -2.5e3, true, null, \"s\\u00e9\\ud83d\\ude00\"], \"b\": {}}"
                .getBytes(StandardCharsets.UTF_8);
        fuzz(js, 3000, 7, b -> Json.parse(new String(b, StandardCharsets.UTF_8)));
    }
}
