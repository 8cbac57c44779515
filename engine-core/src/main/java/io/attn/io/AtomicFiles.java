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
}
