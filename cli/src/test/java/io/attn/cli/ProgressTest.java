package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn run}'s progress on stderr: on a terminal (the launchers say so with {@code -Dattn.stderr.tty}) a bar
 * that follows the forward pass of a single large input to 100% and is cleared at the end; not on a terminal, nothing
 * for a single file and a line per file for a batch.
 */
class ProgressTest {
    @TempDir
    Path dir;

    @AfterEach
    void notATerminalAgain() {
        System.clearProperty("attn.stderr.tty");
    }

    String[] args(Path in, Path out) {
        Path m = dir.resolve("enc.safetensors");
        SafeTensors.write(
                m,
                RandomStateDicts.encoder(LayerConfig.of(16, 4, 32), 3, false, 1),
                Map.of(
                        "config",
                        "{\"module\":\"TransformerEncoder\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32,"
                                + "\"num_layers\":3}"));
        return new String[] {"run", "--model", m.toString(), "--input", in.toString(), "--output", out.toString()};
    }

    @Test
    void aBarFollowsOneLargeInputOnATerminal() {
        Path x = dir.resolve("x.npy");
        Npy.write(x, RandomStateDicts.uniform(2, -1, 1, 2, 300, 16));
        System.setProperty("attn.stderr.tty", "true");
        // every op draws (the bar otherwise draws at most every 100 ms: a warm JVM ran this pass in less, and the test
        // saw only the first and the last draw)
        long interval = Progress.minDrawNanos;
        Progress.minDrawNanos = 0;
        RunCommandTest.Result r;
        try {
            r = RunCommandTest.cli(args(x, dir.resolve("y.npy")));
        } finally {
            Progress.minDrawNanos = interval;
        }
        assertEquals(0, r.code(), r.err());
        String err = r.err();
        java.util.List<Integer> percents = new java.util.ArrayList<>();
        var m = java.util.regex.Pattern.compile("\r\033\\[K\\[[# ]{30}\\] +(\\d+)%, \\d+\\.\\d s")
                .matcher(err);
        while (m.find()) percents.add(Integer.parseInt(m.group(1)));
        assertTrue(percents.size() >= 3 && percents.get(0) < 50, "drawn as the ops run: " + percents);
        assertEquals(100, percents.get(percents.size() - 1), err);
        assertTrue(err.endsWith("\r\033[K"), "the bar is cleared at the end: " + err);
        assertTrue(Files.exists(dir.resolve("y.npy")));

        // a warning gets a line of its own, not the end of the bar's
        Tensor nan = RandomStateDicts.uniform(3, -1, 1, 1, 300, 16);
        nan.data()[7] = Float.NaN;
        Path xn = dir.resolve("xn.npy");
        Npy.write(xn, nan);
        List<String> a = new java.util.ArrayList<>(List.of(args(xn, dir.resolve("yn.npy"))));
        a.addAll(List.of("--non-finite", "warn"));
        var w = RunCommandTest.cli(a.toArray(String[]::new));
        assertEquals(0, w.code(), w.err());
        assertTrue(w.err().contains("\r\033[Kattn: warning: output: holds NaN"), w.err());
    }

    @Test
    void notOnATerminalASingleFileShowsNoProgressAndABatchALinePerFile() throws Exception {
        Path x = dir.resolve("x.npy");
        Npy.write(x, RandomStateDicts.uniform(2, -1, 1, 2, 7, 16));
        System.setProperty("attn.stderr.tty", "false");
        var r = RunCommandTest.cli(args(x, dir.resolve("y.npy")));
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("\r"), r.err());
        assertEquals(1, r.err().lines().count(), r.err()); // the device line only
        Path in = Files.createDirectories(dir.resolve("in"));
        for (String n : new String[] {"a", "b"})
            Npy.write(in.resolve(n + ".npy"), RandomStateDicts.uniform(3, -1, 1, 1, 5, 16));
        var b = RunCommandTest.cli(args(in, dir.resolve("out")));
        assertEquals(0, b.code(), b.err());
        assertTrue(b.err().contains("attn: [1/2] ok " + in.resolve("a.npy")), b.err());
        assertTrue(b.err().contains("attn: [2/2] ok " + in.resolve("b.npy")), b.err());
        assertTrue(b.err().contains("attn: 2 of 2 files done, 0 failed"), b.err());
    }
}
