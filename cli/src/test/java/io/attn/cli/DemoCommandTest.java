package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.reference.layers.RefEmbedding;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo's printed weight tables: rows sum to 1 (to the 4 printed decimals), causal rows are zero above the diagonal. */
class DemoCommandTest {
    static String runCli(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream p = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(p);
            int code = Main.execute(args);
            assertEquals(0, code, "exit code");
        } finally {
            System.setOut(saved);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** The numeric rows of the table whose title line starts with {@code title}. */
    static List<double[]> table(String out, String title, int n) {
        String[] lines = out.split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (!lines[i].startsWith(title)) continue;
            List<double[]> rows = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                String[] f = lines[i + 2 + r].trim().split("\\s+");
                double[] v = new double[n];
                for (int j = 0; j < n; j++) v[j] = Double.parseDouble(f[f.length - n + j]);
                rows.add(v);
            }
            return rows;
        }
        throw new AssertionError("no table '" + title + "' in:\n" + out);
    }

    @Test
    void demoWeightsAreDistributionsAndCausalIsLowerTriangular() {
        String out = runCli("demo", "--device", "cpu");
        assertTrue(out.contains("device: cpu"), out);
        int n = 8; // "The sky is blue and world is round"
        for (String title : new String[] {"self-attention, weights", "causal (masked) self-attention, weights"}) {
            List<double[]> rows = table(out, title, n);
            for (int i = 0; i < n; i++) {
                double sum = 0;
                for (double v : rows.get(i)) sum += v;
                // 8 entries each rounded to 4 decimals: the printed sum is within 8 * 0.5e-4 of the true 1
                assertEquals(1.0, sum, 4e-4 + 1e-9, title + " row " + i);
                if (title.startsWith("causal"))
                    for (int j = i + 1; j < n; j++) assertEquals(0.0, rows.get(i)[j], title);
            }
            if (title.startsWith("causal")) assertEquals(1.0, rows.get(0)[0], 1e-9, "first token sees only itself");
        }
    }

    /**
     * The demo's weights, pinned from the graph-based demo it replaced (nn.Embedding + nn.PositionalEncoding +
     * nn.MultiheadAttention on an executor): the public-API version prints the same digits. Compared within one unit
     * of the last printed digit, so a rounding flip between vector widths cannot fail it while a different weight draw,
     * positional encoding or scale moves entries by far more.
     */
    @Test
    void printsTheWeightsOfTheGraphBasedDemo() {
        String out = runCli("demo", "--device", "cpu");
        assertTrue(out.contains("ids:    [0, 5, 3, 2, 1, 6, 3, 4]   (index in the sorted vocabulary"), out);
        assertTrue(
                out.contains("Embedding(7, 32) + sinusoidal positional encoding + MultiheadAttention(embed_dim=32,"
                        + " num_heads=4), seed 42"),
                out);
        double[][] want = {
            {0.1458, 0.1410, 0.1422, 0.0776, 0.0972, 0.1345, 0.1112, 0.1505},
            {0.0821, 0.0944, 0.2725, 0.0543, 0.0610, 0.0741, 0.2391, 0.1225}
        };
        List<double[]> self = table(out, "self-attention, weights", 8);
        List<double[]> causal = table(out, "causal (masked) self-attention, weights", 8);
        for (int j = 0; j < 8; j++) {
            assertEquals(want[0][j], self.get(0)[j], 1.01e-4, "self-attention row 0 column " + j);
            assertEquals(want[1][j], self.get(7)[j], 1.01e-4, "self-attention row 7 column " + j);
            assertEquals(want[1][j], causal.get(7)[j], 1.01e-4, "causal row 7 sees every token");
        }
        double[] causalRow3 = {0.3508, 0.2184, 0.2036, 0.2272};
        for (int j = 0; j < 4; j++) assertEquals(causalRow3[j], causal.get(3)[j], 1.01e-4, "causal row 3 column " + j);
    }

    /** The demo's positional encoding is the sinusoidal one of the engine and PyTorch's tutorials (odd widths too). */
    @Test
    void positionalEncodingIsTheSinusoidalTable() {
        for (int e : new int[] {32, 7}) {
            double[] want = RefEmbedding.sinusoidalPositionalEncoding(50, e, 0).data();
            for (int p = 0; p < 50; p++) {
                float[] got = DemoCommand.positionalEncoding(p, e);
                for (int c = 0; c < e; c++)
                    assertEquals((float) want[p * e + c], got[c], 1e-6f, "E=" + e + " position " + p + " column " + c);
            }
        }
    }

    @Test
    void perHeadPrintsEveryHead() {
        String out = runCli("demo", "--device", "cpu", "--per-head", "--heads", "2", "--text", "a b c");
        assertTrue(out.contains("self-attention, head 1"), out);
        assertTrue(out.contains("causal (masked) self-attention, averaged over heads"), out);
    }
}
