package io.attn.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@link Kernels#ptx} returns NUL-terminated PTX defining exactly the entry points {@link Kernels#ENTRIES} names. */
class KernelsTest {
    private static final Pattern ENTRY = Pattern.compile("\\.visible \\.entry (\\w+)\\(");

    @Test
    void ptxIsNulTerminatedAndDefinesTheListedEntries() {
        assertEquals(Kernels.NAMES.size(), Kernels.ENTRIES.size());
        for (String n : Kernels.NAMES) {
            byte[] b = Kernels.ptx(n);
            assertEquals(0, b[b.length - 1], n + ": last byte must be NUL");
            String text = new String(b, 0, b.length - 1, StandardCharsets.US_ASCII);
            assertEquals(-1, text.indexOf('\0'), n + ": exactly one NUL, at the end");
            assertTrue(text.contains(".version 9.0"), n + ": expected PTX ISA 9.0 (nvcc 13)");
            assertTrue(text.contains(".target sm_75"), n + ": expected target sm_75");
            java.util.List<String> found = new java.util.ArrayList<>();
            Matcher m = ENTRY.matcher(text);
            while (m.find()) found.add(m.group(1));
            assertEquals(
                    Kernels.ENTRIES.get(n).stream().sorted().toList(),
                    found.stream().sorted().toList(),
                    n + ": entry points");
        }
    }

    @Test
    void unknownNameIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Kernels.ptx("nope"));
    }
}
