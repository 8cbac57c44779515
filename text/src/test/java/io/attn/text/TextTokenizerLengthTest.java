package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Truncation past 512 tokens: DJL's tokenizer caps it at its {@code modelMaxLength}, 512 unless told, so a ModernBERT
 * of 8192 positions had its texts cut at 512 tokens (found measuring an 8192-token text, issue 35). The judge is the
 * untruncated tokenization of the same text by the same tokenizer.json.
 */
class TextTokenizerLengthTest {
    private static final Path TOKENIZER = Path.of("../tests/families/modernbert/tokenizer.json");

    @Test
    void aMaxLengthAbove512CutsThereNotAt512() {
        String text = "Grüße aus Köln, 東京 and 🙂 emoji, a sentence that repeats. ".repeat(200);
        int whole;
        try (TextTokenizer t = TextTokenizer.load(TOKENIZER, 100_000)) {
            TextTokenizer.Tokens[] all = t.encode(List.of(text));
            whole = all[0].ids().length;
            assertFalse(all[0].truncated());
        }
        assertTrue(whole > 2000, "the text is " + whole + " tokens: expected more than the lengths below");
        for (int max : new int[] {300, 513, 2000}) {
            try (TextTokenizer t = TextTokenizer.load(TOKENIZER, max)) {
                TextTokenizer.Tokens[] cut = t.encode(List.of(text));
                assertEquals(max, cut[0].ids().length, "max length " + max);
                assertTrue(cut[0].truncated(), "max length " + max);
            }
        }
    }
}
