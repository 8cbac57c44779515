package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {
    @TempDir
    Path dir;

    private List<Path> listing() throws IOException {
        try (var s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    @Test
    void writesAndReplaces() throws IOException {
        Path p = dir.resolve("out.bin");
        AtomicFiles.write(p, new byte[] {1, 2, 3});
        AtomicFiles.write(p, new byte[] {4});
        assertArrayEquals(new byte[] {4}, Files.readAllBytes(p));
        assertEquals(List.of(p), listing());
    }

    @Test
    void failureLeavesNoFileAndNoTemp() throws IOException {
        Path p = dir.resolve("fail.npy");
        badInput(
                () -> AtomicFiles.write(p, out -> {
                    out.write(new byte[100_000]); // large enough to have reached the disk
                    throw new IOException("disk full (simulated)");
                }),
                "fail.npy",
                "disk full (simulated)");
        assertEquals(List.of(), listing());
        assertThrows(
                IllegalStateException.class,
                () -> AtomicFiles.write(p, out -> {
                    out.write(1);
                    throw new IllegalStateException("bug in a writer");
                }));
        assertEquals(List.of(), listing());
    }

    @Test
    void failureKeepsTheOldFile() throws IOException {
        Path p = dir.resolve("keep.bin");
        AtomicFiles.write(p, new byte[] {9, 9});
        badInput(() -> AtomicFiles.write(p, out -> {
            out.write(new byte[] {1});
            throw new IOException("boom");
        }));
        assertArrayEquals(new byte[] {9, 9}, Files.readAllBytes(p));
        assertEquals(List.of(p), listing());
    }

    @Test
    void missingDirectoryIsBadInput() {
        badInput(() -> AtomicFiles.write(dir.resolve("no/such/dir/x.npy"), new byte[] {1}), "x.npy");
    }

    @Test
    void writeAllIsAllOrNothing() throws IOException {
        Path a = dir.resolve("a.bin"), b = dir.resolve("b.bin"), c = dir.resolve("c.bin");
        Files.write(b, new byte[] {9});
        // the third writer fails: neither the new a nor the new b may appear, the old b stays, no temporaries
        java.util.Map<Path, AtomicFiles.Writer> files = new java.util.LinkedHashMap<>();
        files.put(a, o -> o.write(1));
        files.put(b, o -> o.write(2));
        files.put(c, o -> {
            throw new IOException("disk full");
        });
        badInput(() -> AtomicFiles.writeAll(files), "c.bin", "disk full");
        try (var s = Files.list(dir)) {
            assertEquals(
                    List.of("b.bin"), s.map(p -> p.getFileName().toString()).toList());
        }
        assertArrayEquals(new byte[] {9}, Files.readAllBytes(b));
        // a target whose directory is missing: refused before anything is renamed into place
        java.util.Map<Path, AtomicFiles.Writer> two = new java.util.LinkedHashMap<>();
        two.put(a, o -> o.write(1));
        two.put(dir.resolve("no/such/dir/d.bin"), o -> o.write(2));
        badInput(() -> AtomicFiles.writeAll(two), "d.bin");
        try (var s = Files.list(dir)) {
            assertEquals(
                    List.of("b.bin"), s.map(p -> p.getFileName().toString()).toList());
        }
        // success: all of them
        files.put(c, o -> o.write(3));
        AtomicFiles.writeAll(files);
        assertArrayEquals(new byte[] {2}, Files.readAllBytes(b));
        assertArrayEquals(new byte[] {3}, Files.readAllBytes(c));
        assertArrayEquals(new byte[] {1}, Files.readAllBytes(a));
    }
}
