package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void perHeadPrintsEveryHead() {
        String out = runCli("demo", "--device", "cpu", "--per-head", "--heads", "2", "--text", "a b c");
        assertTrue(out.contains("self-attention, head 1"), out);
        assertTrue(out.contains("causal (masked) self-attention, averaged over heads"), out);
    }
}
