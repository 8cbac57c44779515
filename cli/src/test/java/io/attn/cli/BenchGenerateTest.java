package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code attn bench generate} on a tiny model: the lines README and docs/performance.md quote (the shape and device
 * line, one line per mode, the speed-up) and the JSON last line, in the order and format they show.
 */
class BenchGenerateTest {
    @Test
    void printsBothModesTheSpeedUpAndAJsonLine() {
        var r = RunCommandTest.ok(
                "bench",
                "generate",
                "--prompt-len",
                "6",
                "--new-tokens",
                "5",
                "--batch",
                "2",
                "--d-model",
                "16",
                "--heads",
                "2",
                "--layers",
                "2",
                "--ffn",
                "32",
                "--vocab",
                "50",
                "--device",
                "cpu",
                "--threads",
                "1",
                "--warmup",
                "0",
                "--rounds",
                "1");
        List<String> lines = r.out().lines().toList();
        assertEquals(5, lines.size(), r.out());
        String shape = "B=2 prompt=6 new=5 E=16 H=2 layers=2 F=32 V=50";
        assertTrue(lines.get(0).startsWith("bench generate " + shape + " on cpu"), lines.get(0));
        assertTrue(
                lines.get(1)
                        .matches("  cache    10 tokens in [0-9.]+ s: [0-9.]+ tokens/s \\(prefill [0-9.]+ ms, then"
                                + " [0-9.]+ tokens/s\\)"),
                lines.get(1));
        assertTrue(lines.get(2).startsWith("  no cache 10 tokens in "), lines.get(2));
        assertTrue(lines.get(3).matches("  speed-up of the cache: [0-9.]+x"), lines.get(3));
        assertTrue(
                lines.get(4)
                        .matches("\\{\"bench\":\"generate\",\"device\":\"cpu\",\"threads\":1,\"cached_tokens_per_s\":"
                                + "[0-9.]+,\"uncached_tokens_per_s\":[0-9.]+,\"speedup\":[0-9.]+,\"shape\":\"" + shape
                                + "\"}"),
                lines.get(4));
        var cacheOnly = RunCommandTest.ok(
                "bench",
                "generate",
                "--prompt-len",
                "4",
                "--new-tokens",
                "3",
                "--d-model",
                "16",
                "--heads",
                "2",
                "--layers",
                "1",
                "--ffn",
                "32",
                "--vocab",
                "20",
                "--device",
                "cpu",
                "--mode",
                "cache",
                "--warmup",
                "0");
        assertTrue(cacheOnly.out().contains("\"uncached_tokens_per_s\":null,\"speedup\":null"), cacheOnly.out());
        // three rounds by default: three cache lines, the JSON the median
        List<Double> rates = cacheOnly
                .out()
                .lines()
                .filter(l -> l.startsWith("  cache "))
                .map(l -> Double.parseDouble(l.replaceAll(".*: ([0-9.]+) tokens/s \\(prefill.*", "$1")))
                .sorted()
                .toList();
        assertEquals(3, rates.size(), cacheOnly.out());
        double reported =
                Double.parseDouble(cacheOnly.out().replaceAll("(?s).*\"cached_tokens_per_s\":([0-9.]+),.*", "$1"));
        assertEquals(rates.get(1), reported, 0.006, cacheOnly.out()); // lines %.2f, JSON %.3f
        assertTrue(reported >= rates.get(0) - 0.006 && reported <= rates.get(2) + 0.006, cacheOnly.out());
        // --int8: the same random model quantized as attn quantize does, named in the shape
        var int8 = RunCommandTest.ok(
                "bench",
                "generate",
                "--prompt-len",
                "4",
                "--new-tokens",
                "3",
                "--d-model",
                "16",
                "--heads",
                "2",
                "--layers",
                "1",
                "--ffn",
                "32",
                "--vocab",
                "20",
                "--device",
                "cpu",
                "--mode",
                "cache",
                "--int8",
                "--per-channel");
        assertTrue(int8.out().contains("V=20 int8 per channel on cpu"), int8.out());
        var bad = RunCommandTest.cli("bench", "generate", "--per-channel", "--device", "cpu");
        assertEquals(3, bad.code(), bad.err());
        assertTrue(bad.err().contains("--per-channel applies with --int8 only"), bad.err());
        bad = RunCommandTest.cli("bench", "generate", "--rounds", "0", "--device", "cpu");
        assertEquals(3, bad.code(), bad.err());
        assertTrue(bad.err().contains("--rounds must be 1 to 100"), bad.err());
    }
}
