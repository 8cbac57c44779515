package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static io.attn.io.TestSupport.f32le;
import static io.attn.io.TestSupport.npy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpzTest {
    @TempDir
    Path dir;

    private static Map<String, Tensor> sample() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("q", Tensor.of(new float[] {1, -2, 3.5f, 4, 5, 6}, 2, 3));
        m.put("mask", Tensor.of(new float[] {0, 1}, 2));
        m.put("scalar", Tensor.of(new float[] {7}));
        m.put("empty", Tensor.zeros(0, 4));
        return m;
    }

    /** A zip of deflated entries written by java.util.zip, bypassing Npz's own checks. */
    private static void zip(Path p, Object... nameAndBytes) throws IOException {
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(p))) {
            for (int i = 0; i < nameAndBytes.length; i += 2) {
                z.putNextEntry(new ZipEntry((String) nameAndBytes[i]));
                z.write((byte[]) nameAndBytes[i + 1]);
                z.closeEntry();
            }
        }
    }

    @Test
    void roundTripStoredAndDeflated() {
        for (boolean compress : new boolean[] {false, true}) {
            Path p = dir.resolve(compress ? "c.npz" : "s.npz");
            Npz.write(p, sample(), compress);
            Map<String, Tensor> got = Npz.read(p);
            assertEquals(new ArrayList<>(sample().keySet()), new ArrayList<>(got.keySet()));
            for (var e : sample().entrySet()) {
                assertArrayEquals(
                        e.getValue().shape().dims(), got.get(e.getKey()).shape().dims());
                assertArrayEquals(e.getValue().data(), got.get(e.getKey()).data(), 0f);
            }
        }
    }

    @Test
    void truncationAtEveryByteIsBadInput() throws IOException {
        Path full = dir.resolve("full.npz");
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("a", Tensor.of(new float[] {1, 2, 3}, 3));
        m.put("b", Tensor.of(new float[] {4}, 1));
        for (boolean compress : new boolean[] {false, true}) {
            Npz.write(full, m, compress);
            byte[] bytes = Files.readAllBytes(full);
            Path p = dir.resolve("t.npz");
            for (int k = 0; k < bytes.length; k++) {
                Files.write(p, Arrays.copyOf(bytes, k));
                badInput(() -> Npz.read(p), "t.npz");
            }
        }
    }

    @Test
    void lyingHeaderInsideDeflatedEntryFailsBeforeAllocating() throws IOException {
        Path p = dir.resolve("lie.npz");
        zip(p, "x.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", new byte[64]));
        // refused from the header alone ("claims"), before anything is inflated
        badInput(() -> Npz.read(p), "lie.npz[x.npy]", "claims 4.4 TB", "zip bomb");
    }

    @Test
    void largeHighlyCompressedEntryIsRefusedFromItsHeader() throws IOException {
        // an honest header over 80 MB of zeros (about 80 KB deflated, ratio ~1000): within the 1100:1 deflate bound,
        // but beyond 64 MB only 100:1 is accepted, so it is refused before inflating, from the header's claim
        int n = 20_000_000;
        byte[] head = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + n + ",), }", new byte[0]);
        Path p = dir.resolve("big.npz");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(p))) {
            z.putNextEntry(new ZipEntry("z.npy"));
            z.write(head);
            byte[] zeros = new byte[1 << 20];
            for (long left = 4L * n; left > 0; left -= zeros.length)
                z.write(zeros, 0, (int) Math.min(left, zeros.length));
            z.closeEntry();
        }
        assertTrue(Files.size(p) < 200_000, "test setup: " + Files.size(p));
        badInput(() -> Npz.read(p), "big.npz[z.npy]", "claims 80 MB", "zip bomb");
        // the same limit applies to a header that claims little but inflates to a lot: caught while counting
        Path q = dir.resolve("lie.npz");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(q))) {
            z.putNextEntry(new ZipEntry("z.npy"));
            z.write(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", new byte[16]));
            byte[] zeros = new byte[1 << 20];
            for (int i = 0; i < 80; i++) z.write(zeros);
            z.closeEntry();
        }
        badInput(() -> Npz.read(q), "lie.npz[z.npy]", "inflates to more than", "zip bomb");
    }

    @Test
    void inflationBeyondTheCapIsRefused() throws IOException {
        // 4 MB of zeros deflates to about 4 KB; with a 1 MB entry cap it must be refused while counting
        Path p = dir.resolve("bomb.npz");
        zip(p, "z.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }", new byte[4_000_000]));
        assertEquals(1_000_000, Npz.read(p).get("z").size()); // legitimate under the default limits
        badInput(() -> Npz.read(p, 1 << 20), "bomb.npz[z.npy]", "zip bomb");
    }

    @Test
    void hostileArchives() throws IOException {
        byte[] one = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f32le(1));
        Path notNpy = dir.resolve("n.npz");
        zip(notNpy, "readme.txt", new byte[] {'h', 'i'});
        badInput(() -> Npz.read(notNpy), "'readme.txt' is not an .npy array");
        Path dup = dir.resolve("d.npz");
        // java.util.zip refuses to write duplicate names: write a.npy and b.npy, then rename b to a in the bytes
        zip(dup, "a.npy", one, "b.npy", one);
        byte[] bytes = Files.readAllBytes(dup);
        for (int i = 0; i + 5 <= bytes.length; i++)
            if (bytes[i] == 'b' && bytes[i + 1] == '.' && bytes[i + 2] == 'n' && bytes[i + 3] == 'p') bytes[i] = 'a';
        Files.write(dup, bytes);
        badInput(() -> Npz.read(dup), "duplicate entry 'a.npy'");
        Path garbage = dir.resolve("g.npz");
        Files.write(garbage, "this is not a zip file at all".getBytes());
        badInput(() -> Npz.read(garbage), "g.npz");
        badInput(() -> Npz.read(dir.resolve("missing.npz")), "missing.npz", "file not found");
    }

    @Test
    void failedWriteLeavesNothing() throws IOException {
        Path p = dir.resolve("w.npz");
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("", Tensor.of(new float[] {1}, 1));
        badInput(() -> Npz.write(p, m, false), "empty");
        try (var s = Files.list(dir)) {
            assertEquals(List.of(), s.toList());
        }
        // the stream overload writes a complete archive to any stream
        Npz.write(OutputStream.nullOutputStream(), sample(), true);
    }
}
