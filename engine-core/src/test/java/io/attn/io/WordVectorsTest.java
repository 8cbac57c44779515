package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attn.io.WordVectors.UnknownPolicy;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

class WordVectorsTest {
    private static WordVectors load(String text) {
        return load(text.getBytes(StandardCharsets.UTF_8));
    }

    private static WordVectors load(byte[] bytes) {
        return WordVectors.load(new ByteArrayInputStream(bytes), "wv.txt");
    }

    @Test
    void gloveAndWord2vecForms() {
        WordVectors g = load("the 1 2 3\ncat -0.5 0.25 1e-2\n\n");
        assertEquals(3, g.dim());
        assertEquals(2, g.size());
        assertArrayEquals(new float[] {-0.5f, 0.25f, 0.01f}, g.get("cat"), 0f);
        WordVectors w = load("\uFEFF2 2\r\nthe 1 2\r\ncat\t3 4 \r\n");
        assertEquals(2, w.dim());
        assertArrayEquals(new float[] {3, 4}, w.get("cat"), 0f);
        assertNull(w.get("dog"));
        assertFalse(w.contains("The"), "lookup is case-sensitive");
    }

    @Test
    void duplicatesFirstWins() {
        WordVectors g = load("a 1 1\nb 2 2\na 3 3\n");
        assertEquals(2, g.size());
        assertEquals(1, g.duplicates());
        assertArrayEquals(new float[] {1, 1}, g.get("a"), 0f);
    }

    @Test
    void wordsWithSpacesAsInGlove840B() {
        WordVectors g = load("x 1 2\n. . . 3 4\n");
        assertArrayEquals(new float[] {3, 4}, g.get(". . ."), 0f);
    }

    @Test
    void errorsNameTheLine() {
        badInput(() -> load("a 1 2 3\nb 1 2\n"), "wv.txt", "line 2", "expected 3 values", "found 2");
        badInput(() -> load("a 1 2 3\nb 1 2 3 4\n"), "line 2", "expected 3 values", "found 4");
        badInput(() -> load("a 1 2\nb 1 x\n"), "line 2", "'x' is not a finite float32 number");
        badInput(() -> load("a 1 2\nb 1 1e50\n"), "line 2", "not a finite");
        badInput(() -> load("a 1 2\nb 1 nan\n"), "line 2");
        badInput(() -> load("3 2\na 1 2\nb 1 2\n"), "header declares 3 words but the file has 2");
        badInput(() -> load("2 2\na 1 2 3\n"), "line 2", "expected 2 values");
        badInput(() -> load("word\n"), "line 1", "no vector values");
        badInput(() -> load("5 0\n"), "line 1", "dim 0");
        badInput(() -> load(""), "no word vectors");
        byte[] bad = "a 1 2\nb\u00e9 3 4\n".getBytes(StandardCharsets.UTF_8);
        bad[8] = (byte) 0xff; // break the second byte of 'é' on line 2
        badInput(() -> load(bad), "line 2", "invalid UTF-8");
        byte[] latin1 = "a 1 2\ncaf\u00e9 3 4\n".getBytes(StandardCharsets.ISO_8859_1);
        badInput(() -> load(latin1), "line 2", "invalid UTF-8");
    }

    @Test
    void embedPolicies() {
        WordVectors g = load("the 1 2\ncat 3 4\n");
        List<String> toks = List.of("the", "dog", "cat", "dog");
        WordVectors.Embedding z = g.embed(toks, UnknownPolicy.ZERO);
        assertArrayEquals(new int[] {4, 2}, z.tensor().shape().dims());
        assertArrayEquals(new float[] {1, 2, 0, 0, 3, 4, 0, 0}, z.tensor().data(), 0f);
        assertEquals(List.of("dog", "dog"), z.unknown());
        WordVectors.Embedding s = g.embed(toks, UnknownPolicy.SKIP);
        assertArrayEquals(new int[] {2, 2}, s.tensor().shape().dims());
        assertArrayEquals(new float[] {1, 2, 3, 4}, s.tensor().data(), 0f);
        assertEquals(List.of("dog", "dog"), s.unknown());
        badInput(() -> g.embed(toks, UnknownPolicy.ERROR), "wv.txt", "2 token(s)", "'dog'");
        assertEquals(List.of(), g.embed(List.of("cat"), UnknownPolicy.ERROR).unknown());
        assertArrayEquals(
                new int[] {0, 2},
                g.embed(List.of("x"), UnknownPolicy.SKIP).tensor().shape().dims());
    }

    @Test
    void manyRowsSpanBlocks() {
        // dim 300 gives 3495 rows per 4 MiB block: 8000 rows cover three blocks, the last one partial
        int dim = 300, n = 8000;
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int r = 0; r < n; r++) {
            StringBuilder sb = new StringBuilder("w" + r);
            for (int k = 0; k < dim; k++) sb.append(' ').append(r).append('.').append(k % 10);
            b.writeBytes(sb.append('\n').toString().getBytes(StandardCharsets.US_ASCII));
        }
        WordVectors g = load(b.toByteArray());
        assertEquals(n, g.size());
        for (int r : new int[] {0, 3494, 3495, 6990, 7999}) {
            float[] v = g.get("w" + r);
            for (int k = 0; k < dim; k++) assertEquals(Float.parseFloat(r + "." + (k % 10)), v[k], 0f);
        }
    }

    @Test
    void decimalParserMatchesFloatParseFloat() {
        // Float.parseFloat is correctly rounded; the fast path must agree exactly on typical embedding values
        // (1 to 8 fraction digits, fixed and scientific) and on edge cases, including a double-rounding trap:
        // 1.00000005960464477539062500001 is just above the halfway point between 1 and 1 + 2^-23.
        Random r = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            double v = r.nextGaussian() * Math.pow(10, r.nextInt(9) - 4);
            String s = String.format(Locale.ROOT, "%." + (1 + r.nextInt(8)) + (r.nextBoolean() ? "f" : "e"), v);
            byte[] b = s.getBytes(StandardCharsets.US_ASCII);
            assertEquals(Float.parseFloat(s), Decimal.parse(b, 0, b.length), 0f, s);
        }
        for (String s : new String[] {
            "0",
            "-0.0",
            "1e-45",
            "3.4028235e38",
            "123456789012345678901234",
            ".5",
            "5.",
            "1.00000005960464477539062500001",
            "1.0000000596046448",
            "1.4e-45",
            "7e-46",
            "1.17549435e-38",
            "16777217",
            "16777219",
            "-16777217.0"
        }) {
            byte[] b = s.getBytes(StandardCharsets.US_ASCII);
            assertEquals(Float.parseFloat(s), Decimal.parse(b, 0, b.length), 0f, s);
        }
        for (String s : new String[] {"", "-", ".", "1e", "1x", "0x10", "1f", "NaN", "Infinity", "4e38", "--1"}) {
            byte[] b = s.getBytes(StandardCharsets.US_ASCII);
            assertEquals(Float.NaN, Decimal.parse(b, 0, b.length), 0f, s);
        }
    }

    @Test
    void tokenize() {
        assertEquals(
                List.of("the", "cat", "don't", "sit", ",", "o'clock", ".", "it's", "42", "café", "!"),
                WordVectors.tokenize("The CAT don\u2019t   sit, O'Clock. It's 42 Café!"));
        assertEquals(List.of("'", "quoted", "'", "-", "x"), WordVectors.tokenize("'quoted' -x"));
        assertEquals(List.of(), WordVectors.tokenize(" \t\n "));
    }
}
