package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The engine's internals sit below its public API: the packages that build and run graphs ({@code nn}, {@code
 * generate}, {@code graph}, {@code exec}, {@code backend}, {@code io}, {@code tensor}) use nothing of {@code
 * io.attn.engine} but its two option enums ({@code AttentionWeights}: which weights a forward returns; {@code
 * Precision}: a backend's arithmetic) and {@code Tune}'s request and report records (what {@code attn tune} asks a
 * backend provider for, and what it returns). Requests, results, generations and the entry points (Engine, AttnModel,
 * LanguageModel) are the API layer's: it checks a request and hands the internals a {@link Signature} and feeds.
 */
class LayeringTest {
    private static final Pattern ENGINE_USE = Pattern.compile("io\\.attn\\.engine\\.(\\w+)");
    private static final Set<String> ALLOWED = Set.of("AttentionWeights", "Precision", "Tune");
    private static final List<String> INTERNAL = List.of("nn", "generate", "graph", "exec", "backend", "io", "tensor");

    @Test
    void internalsDoNotUseTheApiLayer() throws IOException {
        List<String> bad = new ArrayList<>();
        int scanned = 0;
        for (String pkg : INTERNAL) {
            Path dir = Path.of("src/main/java/io/attn", pkg);
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    scanned++;
                    Matcher m = ENGINE_USE.matcher(Files.readString(f));
                    while (m.find())
                        if (!ALLOWED.contains(m.group(1))) bad.add(pkg + "/" + f.getFileName() + ": " + m.group());
                }
            }
        }
        assertTrue(scanned > 50, "scanned only " + scanned + " files: wrong working directory?");
        assertEquals(List.of(), bad);
    }
}
