package io.attn.text.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The heap a read needs: all-MiniLM-L6-v2 (a 91 MB file, 91 MB of float32 weights, the largest 47 MB) is read in a
 * JVM limited to 170 MB. Each initializer's bytes are dropped once converted, so a read needs about the file plus the
 * largest weight (138 MB); holding every raw_data until the end, as parsing a mapping with aliasing does, needs the
 * file plus all the weights (182 MB) and fails here.
 */
class OnnxBertMemoryTest {
    @TempDir
    Path dir;

    @Test
    void minilmReadsIn170MegabytesOfHeap() throws Exception {
        Path model = dir.resolve("all-minilm-l6-v2.onnx");
        try (InputStream in = getClass()
                .getClassLoader()
                .getResourceAsStream(model.getFileName().toString())) {
            Files.copy(in, model);
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(List.of(
                        java,
                        "-Xmx170m",
                        "-XX:+UseG1GC",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Child.class.getName(),
                        model.toString()))
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), output);
    }

    /** Reads the model given as the argument; exits 0 if it read 103 weights. */
    public static final class Child {
        public static void main(String[] args) {
            int n = OnnxBert.read(Path.of(args[0])).weights().size();
            System.exit(n == 103 ? 0 : 1);
        }
    }
}
