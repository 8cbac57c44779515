package io.attn.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WordTokenizerTest {
    @TempDir
    Path dir;

    static final List<String> VOCAB = List.of("<unk>", "<bos>", "<eos>", "hello", ",", "world", "!", "it", "'", "s");

    @Test
    void splitsAtWhitespaceAndPunctuationLowerCasingForALowerCaseVocabulary() {
        WordTokenizer t = new WordTokenizer(VOCAB);
        assertEquals(
                List.of("hello", ",", "world", "!", "it", "'", "s", "3", ".", "5", "café"),
                t.split("  Hello,\tworld!\nIt's 3.5 Café"));
        assertArrayEquals(new int[] {3, 4, 5, 6, 7, 8, 9, 0}, t.encode("Hello, world! It's unknown"));
        assertEquals(0, t.unk());
        assertEquals(1, t.bos());
        assertEquals(2, t.eos());
        assertEquals("world", t.token(5));
        assertEquals(0, t.encode("   ").length);
        assertArrayEquals(new int[] {1, 3, 4, 5}, t.encodeWithBos("hello, world"));
        assertArrayEquals(new int[] {1}, t.encodeWithBos(""));
        assertEquals("hello , world", t.decode(3, 4, 5, 2, 6)); // up to <eos>
        assertEquals("<unk> <bos> !", t.decode(0, 1, 6));
        assertEquals("", t.decode());
    }

    @Test
    void keepsCaseWhenTheVocabularyHasUpperCase() {
        WordTokenizer t = new WordTokenizer(List.of("<unk>", "<bos>", "<eos>", "Hello", "hello"));
        assertArrayEquals(new int[] {3, 4, 0}, t.encode("Hello hello HELLO"));
    }

    @Test
    void readsAFileAndRejectsBadVocabularies() throws Exception {
        Path f = dir.resolve("v.txt");
        Files.writeString(f, String.join("\n", VOCAB) + "\n");
        assertEquals(VOCAB.size(), WordTokenizer.read(f).vocabSize());
        Files.writeString(f, "<unk>\n<bos>\nhello\n");
        var e = assertThrows(AttnException.class, () -> WordTokenizer.read(f));
        assertTrue(e.getMessage().contains("<eos>"), e.getMessage());
        Files.writeString(f, "<unk>\n<bos>\n<eos>\nhello\nhello\n");
        e = assertThrows(AttnException.class, () -> WordTokenizer.read(f));
        assertTrue(e.getMessage().contains("duplicate"), e.getMessage());
        assertThrows(AttnException.class, () -> new WordTokenizer(VOCAB).token(99));
    }
}
