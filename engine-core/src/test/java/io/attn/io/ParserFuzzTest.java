package io.attn.io;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.attn.AttnException;
import io.attn.nn.ModelConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Jazzer fuzz tests, one per parser. Each feeds arbitrary bytes to a reader; the only exception allowed to escape is a
 * one-line {@link AttnException} with code BAD_INPUT or SHAPE_MISMATCH. Anything else (a RuntimeException, an
 * OutOfMemoryError from trusting a header, a StackOverflowError) is a finding.
 *
 * <p>A plain {@code mvn test} runs them in regression mode: each method runs once per file of its committed corpus,
 * {@code src/test/resources/io/attn/io/ParserFuzzTestInputs/<method>/} (plus the empty input). Fuzzing mode, on
 * demand, explores new inputs for one method ({@code JAZZER_FUZZ=1}; see docs/robustness.md):
 *
 * <pre>
 * JAZZER_FUZZ=1 mvn -pl engine-core test -Dtest='ParserFuzzTest#npy' -Djazzer.max_duration=5m
 * </pre>
 */
class ParserFuzzTest {
    /** Runs {@code r}; an AttnException of an input kind is the expected way to refuse bad bytes. */
    private static void expectOnlyInputErrors(Runnable r) {
        try {
            r.run();
        } catch (AttnException e) {
            assertTrue(
                    e.code() == AttnException.Code.BAD_INPUT || e.code() == AttnException.Code.SHAPE_MISMATCH,
                    "unexpected code " + e.code() + ": " + e.getMessage());
            String m = e.getMessage();
            assertTrue(m != null && !m.isBlank(), "empty message");
            assertFalse(m.contains("\n"), "message must be one line: " + m);
        }
    }

    /** Writes {@code b} to a fresh temp file with the given suffix, runs {@code r} on it, deletes it. */
    private static void withFile(byte[] b, String suffix, java.util.function.Consumer<Path> r) {
        Path p;
        try {
            p = Files.createTempFile("attn-fuzz", suffix);
            Files.write(p, b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            r.accept(p);
        } finally {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a leftover temp file is harmless
            }
        }
    }

    @FuzzTest(maxDuration = "10s")
    void npy(byte[] b) {
        expectOnlyInputErrors(() -> Npy.read(b, "f.npy"));
        expectOnlyInputErrors(() -> Npy.read(new ByteArrayInputStream(b), b.length, "f.npy"));
    }

    @FuzzTest(maxDuration = "10s")
    void npz(byte[] b) {
        // a small entry cap keeps fuzzing fast; the ratio guard is what stops bombs at the default cap
        withFile(b, ".npz", p -> expectOnlyInputErrors(() -> Npz.read(p, 1 << 20)));
    }

    @FuzzTest(maxDuration = "10s")
    void safetensors(byte[] b) {
        expectOnlyInputErrors(() -> SafeTensors.read(b, "f.safetensors"));
    }

    @FuzzTest(maxDuration = "10s")
    void wordVectors(byte[] b) {
        expectOnlyInputErrors(() -> WordVectors.load(new ByteArrayInputStream(b), "f.txt"));
    }

    /**
     * The JSON parser on text (in memory, fast), and the same text as a JSON Lines record ({@link Json#textField});
     * {@link #modelConfig} covers reading bytes from a file (UTF-8).
     */
    @FuzzTest(maxDuration = "10s")
    void json(byte[] b) {
        String text = new String(b, StandardCharsets.UTF_8);
        expectOnlyInputErrors(() -> Json.parse(text, "f.json"));
        expectOnlyInputErrors(() -> Json.textField(text, "text", "f.jsonl: line 1"));
    }

    /**
     * Config JSON as {@code attn run} reads it: a file, strict UTF-8, parsed, then understood as a module config (or a
     * decoder-only LM config).
     */
    @FuzzTest(maxDuration = "10s")
    @SuppressWarnings("unchecked")
    void modelConfig(byte[] b) {
        withFile(
                b,
                ".json",
                p -> expectOnlyInputErrors(() -> {
                    if (!(Json.read(p) instanceof Map<?, ?> m)) return;
                    if (io.attn.nn.DecoderOnlyConfig.MODULE.equals(m.get("module")))
                        io.attn.nn.DecoderOnlyConfig.parse((Map<String, Object>) m, p.toString());
                    else ModelConfig.parse((Map<String, Object>) m, p.toString());
                }));
    }
}
