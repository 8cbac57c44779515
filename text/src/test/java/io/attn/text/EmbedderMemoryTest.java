package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory of a real model in use: all-MiniLM-L6-v2 (a 90 MB model.safetensors) loaded and run on the 60 mixed texts in a
 * JVM whose heap is limited to 2.5 times the file (loading holds the weights once, 90 MB; the first call adds the CPU's
 * packed copy of the Linear weights, 42 MB, and the working memory of the batch; G1 needs the rest as headroom for its
 * large arrays), and the heap after 15 more calls is what it was after 5: steady-state calls do not grow it. Tagged
 * {@code long} (a child JVM at the edge of its heap, 40 s or more): CI's {@code ./attn test -Plong-tests} runs it.
 */
@Tag("long")
class EmbedderMemoryTest {
    @TempDir
    Path dir;

    @Test
    void minilmRunsInTwoAndAHalfTimesItsFileAndCallsDoNotGrowTheHeap() throws Exception {
        Path onnx = copy("all-minilm-l6-v2.onnx"), tok = copy("all-minilm-l6-v2-tokenizer.json");
        Path folder = dir.resolve("all-MiniLM-L6-v2");
        TextModel.read(onnx, tok).writeFolder(folder, Pooling.MEAN, true);
        long file = Files.size(folder.resolve("model.safetensors"));
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(List.of(
                        java,
                        "-Xmx" + (long) (2.5 * file / (1 << 20)) + "m",
                        "-XX:+UseG1GC",
                        "--add-modules",
                        "jdk.incubator.vector",
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Child.class.getName(),
                        folder.toString()))
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(120, TimeUnit.SECONDS);
        System.out.println("EmbedderMemoryTest child: "
                + output.lines().filter(l -> l.startsWith("heap")).toList());
        assertEquals(0, p.exitValue(), output);
    }

    private Path copy(String name) throws Exception {
        Path p = dir.resolve(name);
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(name)) {
            Files.copy(in, p);
        }
        return p;
    }

    /** Loads the folder, embeds the mixed texts 20 times; exits 1 if the heap after call 20 exceeds call 5's by 1 MB. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            List<String> texts;
            try (InputStream in = Child.class.getClassLoader().getResourceAsStream("io/attn/text/mixed.txt")) {
                texts = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                        .lines()
                        .toList();
            }
            try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                    Embedder m = Embedder.load(engine, Path.of(args[0]))) {
                long loaded = used();
                for (int i = 0; i < 10; i++) m.embed(texts);
                long at10 = used();
                for (int i = 0; i < 40; i++) m.embed(texts);
                long at50 = used();
                System.out.printf(
                        "heap loaded %.1f MB, after 10 calls %.1f MB, after 50 %.1f MB%n",
                        loaded / 1e6, at10 / 1e6, at50 / 1e6);
                System.exit(at50 - at10 > (1 << 20) ? 1 : 0);
            }
        }

        private static long used() {
            for (int i = 0; i < 3; i++) System.gc();
            return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        }
    }
}
