package io.attn.cli;

import io.attn.AttnException;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/** JSON lines for {@code rerank} and {@code classify}: written to a temporary file, renamed into place at the end. */
final class ScoreOutput {
    private ScoreOutput() {}

    static void write(Path out, List<String> lines) {
        Path abs = out.toAbsolutePath();
        Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp-" + Long.toHexString(System.nanoTime()));
        try {
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                for (String l : lines) w.write(l + "\n");
            }
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (java.nio.file.AccessDeniedException e) {
            throw AttnException.badInput(out + ": cannot write (permission denied)");
        } catch (IOException e) {
            throw AttnException.badInput(out + ": cannot write (" + e.getMessage() + ")");
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // a leftover temporary file is named as such
            }
        }
    }

    /** A JSON string literal. */
    static String json(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    /** A float as JSON (shortest round-trip form). */
    static String json(float f) {
        return Float.toString(f);
    }

    /** One line of a text for the terminal: control characters as spaces, cut at 70 characters. */
    static String shown(String t) {
        String s = t.replaceAll("\\p{Cntrl}", " ");
        return s.length() > 70 ? s.substring(0, 67) + "..." : s;
    }
}
