package io.attn.io;

import io.attn.AttnException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Crash-safe file output: the content goes to a temporary file in the target's directory, is flushed to disk, and is
 * then renamed over the target with {@code ATOMIC_MOVE}. Readers see either the old file or the complete new one,
 * never a partial write. On any failure the temporary file is deleted and the target is left untouched.
 *
 * <p>If the file system cannot rename atomically, a plain replacing move is used instead.
 */
public final class AtomicFiles {
    private AtomicFiles() {}

    /** Writes the content; may throw IOException, which is reported as a BAD_INPUT naming the target. */
    @FunctionalInterface
    public interface Writer {
        void write(OutputStream out) throws IOException;
    }

    /** Writes {@code bytes} to {@code target} atomically. */
    public static void write(Path target, byte[] bytes) {
        write(target, out -> out.write(bytes));
    }

    /**
     * Runs {@code writer} against a buffered stream to a temporary file next to {@code target}, then moves it into
     * place. Exceptions thrown by the writer propagate (IOExceptions wrapped as {@link AttnException}) after the
     * temporary file has been removed.
     */
    public static void write(Path target, Writer writer) {
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        if (dir == null) throw IoUtil.bad(target.toString(), "cannot write: no parent directory");
        Path tmp = dir.resolve("." + abs.getFileName() + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        boolean created = false;
        try {
            try (OutputStream os = new BufferedOutputStream(
                    Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), 1 << 16)) {
                created = true;
                writer.write(os);
            }
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
            created = false;
        } catch (IOException e) {
            throw IoUtil.io(target.toString(), "write", e);
        } finally {
            if (created) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: nothing more can be done
                }
            }
        }
    }

    /**
     * Writes several files as one unit: every content goes to its temporary file first; only when all were written
     * are they renamed into place. If any writer fails, no target is touched. If a rename fails part-way (a full or
     * vanished disk), the targets already renamed that did not exist before are deleted again, so a failure leaves
     * at most the previous files, never a partial set of new ones.
     */
    public static void writeAll(java.util.Map<Path, Writer> files) {
        java.util.List<Path[]> staged = new java.util.ArrayList<>(); // {tmp, target}
        java.util.List<Path> created = new java.util.ArrayList<>();
        boolean ok = false;
        try {
            for (var e : files.entrySet()) {
                Path abs = e.getKey().toAbsolutePath();
                Path dir = abs.getParent();
                if (dir == null) throw IoUtil.bad(e.getKey().toString(), "cannot write: no parent directory");
                Path tmp = dir.resolve("." + abs.getFileName() + "."
                        + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
                try {
                    OutputStream os = new BufferedOutputStream(
                            Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                            1 << 16);
                    staged.add(new Path[] {tmp, abs});
                    try (os) {
                        e.getValue().write(os);
                    }
                    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                } catch (IOException x) {
                    throw IoUtil.io(e.getKey().toString(), "write", x);
                }
            }
            for (Path[] st : staged) {
                boolean existed = Files.exists(st[1]);
                try {
                    try {
                        Files.move(st[0], st[1], StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } catch (AtomicMoveNotSupportedException x) {
                        Files.move(st[0], st[1], StandardCopyOption.REPLACE_EXISTING);
                    }
                } catch (IOException x) {
                    throw IoUtil.io(st[1].toString(), "write", x);
                }
                if (!existed) created.add(st[1]);
            }
            ok = true;
        } finally {
            if (!ok) {
                for (Path[] st : staged) deleteQuietly(st[0]);
                for (Path c : created) deleteQuietly(c);
            }
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // best effort: nothing more can be done
        }
    }
}
