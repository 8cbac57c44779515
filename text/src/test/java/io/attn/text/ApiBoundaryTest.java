package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The text module is a client of the engine's public API: its sources import from the engine only {@code io.attn}
 * (AttnException), {@code io.attn.engine}, {@code io.attn.tensor} and {@code io.attn.io} (the file formats; JSON).
 * Internals ({@code nn}, {@code graph}, {@code exec}, {@code backend}) are the engine's to change.
 */
class ApiBoundaryTest {
    private static final Pattern IMPORT =
            Pattern.compile("^import (static )?(io\\.attn\\.[\\w.]+);", Pattern.MULTILINE);
    /** An internal package named in the code itself (a qualified name, which needs no import). */
    private static final Pattern QUALIFIED =
            Pattern.compile("\\bio\\.attn\\.(nn|graph|exec|backend|generate|cpu|cuda|ops|parity)\\.\\w+");

    @Test
    void textSourcesUseThePublicApiOnly() throws IOException {
        List<String> bad = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = IMPORT.matcher(Files.readString(f));
                while (m.find()) {
                    String imp = m.group(2);
                    boolean ok = imp.equals("io.attn.AttnException")
                            || imp.startsWith("io.attn.engine.")
                            || imp.startsWith("io.attn.tensor.")
                            || imp.startsWith("io.attn.io.")
                            || imp.startsWith("io.attn.text.");
                    if (!ok) bad.add(f.getFileName() + ": " + imp);
                }
                Matcher q = QUALIFIED.matcher(Files.readString(f));
                while (q.find()) bad.add(f.getFileName() + ": " + q.group());
            }
        }
        assertEquals(List.of(), bad);
    }
}
