package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static io.attn.io.TestSupport.f32le;
import static io.attn.io.TestSupport.npy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.tensor.Tensor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpyTest {
    @TempDir
    Path dir;

    private static Tensor random(Random r, int... dims) {
        Tensor t = Tensor.zeros(dims);
        for (int i = 0; i < t.size(); i++) t.data()[i] = (float) r.nextGaussian();
        return t;
    }

    private static void assertSame(Tensor want, Tensor got) {
        assertArrayEquals(want.shape().dims(), got.shape().dims());
        assertArrayEquals(want.data(), got.data(), 0f); // float32 in, float32 out: bit-exact
    }

    @Test
    void roundTripShapes() {
        Random r = new Random(1);
        for (int[] dims : new int[][] {{}, {1}, {7}, {2, 3}, {0, 3}, {2, 3, 4, 5}, {1, 1, 1, 1, 1, 1, 1}}) {
            Tensor t = random(r, dims);
            byte[] b = Npy.toBytes(t);
            assertEquals(0, (b.length - 4 * t.size()) % 64, "header padded to 64 bytes like numpy");
            assertSame(t, Npy.read(b, "mem.npy"));
            assertSame(t, Npy.read(new ByteArrayInputStream(b), b.length, "stream.npy"));
        }
    }

    @Test
    void roundTripFileIsAtomicAndReplaces() throws IOException {
        Path p = dir.resolve("x.npy");
        Npy.write(p, Tensor.of(new float[] {1, 2}, 2));
        Tensor t = random(new Random(2), 3, 4);
        Npy.write(p, t);
        assertSame(t, Npy.read(p));
        try (var s = Files.list(dir)) {
            assertEquals(1, s.count(), "no temporary files left behind");
        }
    }

    @Test
    void writtenHeaderIsWhatNumpyWrites() {
        byte[] b = Npy.toBytes(Tensor.of(new float[6], 2, 3));
        String header = new String(b, 10, 118, java.nio.charset.StandardCharsets.ISO_8859_1);
        assertEquals("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", header.strip());
        assertEquals(1, b[6]); // version 1.0
        assertEquals(118, (b[8] & 0xff) | (b[9] & 0xff) << 8);
    }

    @Test
    void headerOver64KiBSwitchesToVersion2() {
        int[] dims = new int[22_000]; // "1, " per dim: a 66 KB shape text, more than a v1.0 header can hold
        Arrays.fill(dims, 1);
        byte[] h = Npy.header(Tensor.zeros(dims));
        assertEquals(2, h[6]);
        assertEquals(0, h.length % 64);
        int hlen = (h[8] & 0xff) | (h[9] & 0xff) << 8 | (h[10] & 0xff) << 16 | (h[11] & 0xff) << 24;
        assertEquals(h.length - 12, hlen);
        assertEquals('\n', h[h.length - 1]);
        // our reader caps rank at 64 (numpy's own limit), so such a file is refused cleanly rather than read
        badInput(() -> Npy.read(Npy.toBytes(Tensor.zeros(dims)), "r.npy"), "more than 64 dimensions");
    }

    @Test
    void fortranOrderIsTransposed() {
        // column-major data 0..5 for shape (2, 3): element (i, j) = i + 2 j
        byte[] b = npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32le(0, 1, 2, 3, 4, 5));
        Tensor t = Npy.read(b, "f.npy");
        for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) assertEquals(i + 2 * j, t.get(i, j), 0f);
    }

    @Test
    void truncationAtEveryByteIsBadInput() throws IOException {
        byte[] full = Npy.toBytes(random(new Random(3), 2, 3));
        Path p = dir.resolve("t.npy");
        for (int k = 0; k < full.length; k++) {
            byte[] cut = Arrays.copyOf(full, k);
            badInput(() -> Npy.read(cut, "t.npy"), "t.npy");
            Files.write(p, cut);
            badInput(() -> Npy.read(p), "t.npy");
            badInput(() -> Npy.read(new ByteArrayInputStream(cut), cut.length, "t.npy"));
        }
        Npy.read(full, "t.npy"); // the whole file is fine
    }

    @Test
    void hugeDeclaredShapeFailsBeforeAllocating() {
        // 2^40 float32 elements claimed, 64 bytes present: must be refused from the header alone
        byte[] b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", new byte[64]);
        badInput(() -> Npy.read(b, "x.npy"), "x.npy", "(1048576, 1048576)", "4.4 TB", "64 bytes");
        byte[] c = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", new byte[64]);
        badInput(() -> Npy.read(c, "y.npy"), "8 TB");
    }

    @Test
    void hostileHeaders() {
        byte[] d = f32le(1, 2);
        String[][] cases = {
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "negative dimension"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "overflows"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", "64 bits"},
            {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<c8'"},
            {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
            {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "structured"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", "not a tuple"},
            {"{'descr': '<f4', 'fortran_order': False, }", "needs the keys"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", "unexpected key 'extra'"},
            {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "duplicate key"},
            {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }", "True or False"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", "after the header"},
            {"['descr', '<f4']", "expected '{'"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "but the file holds 8 bytes"},
            {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "after the 4 bytes of data"},
        };
        for (String[] c : cases) badInput(() -> Npy.read(npy(c[0], d), "h.npy"), "h.npy", c[1]);
        // zero elements, but a dimension no Java array can index
        byte[] z = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296), }", new byte[0]);
        badInput(() -> Npy.read(z, "z.npy"), "too large");
    }

    @Test
    void badMagicVersionAndHeaderLength() {
        byte[] good = Npy.toBytes(Tensor.of(new float[] {1}, 1));
        byte[] magic = good.clone();
        magic[1] = 'X';
        badInput(() -> Npy.read(magic, "m.npy"), "bad magic");
        byte[] ver = good.clone();
        ver[6] = 4;
        badInput(() -> Npy.read(ver, "v.npy"), "version 4.0");
        // version 2.0 with a 4-byte header length of 2 GiB: refused by the cap, nothing allocated
        byte[] v2 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f32le(1), 2);
        v2[8] = 0;
        v2[9] = 0;
        v2[10] = 0;
        v2[11] = (byte) 0x80;
        badInput(() -> Npy.read(v2, "l.npy"), "exceeds the 1.05 MB cap");
        // a version 1.0 header length pointing past the end of the file
        byte[] past = good.clone();
        past[8] = (byte) 0xff;
        past[9] = (byte) 0xff;
        badInput(() -> Npy.read(past, "p.npy"), "truncated");
        badInput(() -> Npy.read(new byte[0], "e.npy"), "too short");
    }

    @Test
    void version2And3HeadersRead() {
        byte[] v2 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32le(1, 2), 2);
        assertArrayEquals(new float[] {1, 2}, Npy.read(v2, "v2.npy").data(), 0f);
        byte[] v3 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32le(3, 4), 3);
        assertArrayEquals(new float[] {3, 4}, Npy.read(v3, "v3.npy").data(), 0f);
        byte[] badUtf8 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32le(3, 4), 3);
        badUtf8[30] = (byte) 0xC3; // a lead byte followed by ASCII
        badInput(() -> Npy.read(badUtf8, "u.npy"), "not valid UTF-8");
    }

    @Test
    void missingFileIsBadInput() {
        badInput(() -> Npy.read(dir.resolve("nope.npy")), "nope.npy", "file not found");
    }
}
