package io.attn.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.attn.AttnException;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every valid fixture cut at every byte: the binary formats (npy, npz, safetensors) must refuse every proper prefix
 * with a one-line BAD_INPUT (a prefix of one of these is never a valid file: sizes are declared up front); the text
 * formats may accept a prefix that happens to be valid (word vectors cut after a line), but nothing else may escape.
 */
class TruncationTest {
    @TempDir
    Path dir;

    interface Reader {
        void read(byte[] b) throws Exception;
    }

    private static void everyPrefix(String fixture, boolean prefixesAreInvalid, Reader r) throws Exception {
        byte[] full = Files.readAllBytes(TestSupport.fixture(fixture));
        r.read(full); // the whole file is valid
        for (int n = 0; n < full.length; n++) {
            byte[] b = Arrays.copyOf(full, n);
            try {
                r.read(b);
                if (prefixesAreInvalid) fail(fixture + " cut to " + n + " bytes was accepted");
            } catch (AttnException e) {
                assertEquals(AttnException.Code.BAD_INPUT, e.code(), fixture + " cut to " + n + ": " + e.getMessage());
                assertFalse(e.getMessage().contains("\n"), e.getMessage());
            } catch (Exception | Error e) {
                fail(fixture + " cut to " + n + " bytes: " + e, e);
            }
        }
    }

    @Test
    void npy() throws Exception {
        for (String f : new String[] {"f4_2x3.npy", "be_f4_2x2.npy", "fortran_3x4.npy", "v3_f4_2.npy", "bool_2x4.npy"})
            everyPrefix(f, true, b -> Npy.read(b, f));
    }

    @Test
    void safetensors() throws Exception {
        everyPrefix("mixed.safetensors", true, b -> SafeTensors.read(b, "mixed.safetensors"));
    }

    @Test
    void npz() throws Exception {
        Path p = dir.resolve("t.npz");
        for (String f : new String[] {"stored.npz", "compressed.npz"})
            everyPrefix(f, true, b -> {
                Files.write(p, b);
                Npz.read(p);
            });
    }

    @Test
    void wordVectors() throws Exception {
        for (String f : new String[] {"glove_4d.txt", "w2v_4d.txt"})
            everyPrefix(f, false, b -> WordVectors.load(new ByteArrayInputStream(b), f));
    }
}
