package io.attn.cli;

import io.attn.AttnException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Vectors streamed to a file as they are computed, atomically: they go to a temporary file beside the target, which
 * is renamed into place by {@link #commit} only; {@link #close} without a commit deletes it, so a failed or interrupted
 * run leaves no partial output. {@code .npy}: float32 {@code (N, E)}, its header rewritten with the final N at commit
 * (the header has room for any N); {@code .jsonl}: one {@code {"index": i, "embedding": [...]}} per line.
 *
 * <p>Not thread-safe.
 */
final class EmbeddingWriter implements AutoCloseable {
    /** The .npy header length: magic, version, length field and the padded dict, a multiple of 64. */
    private static final int NPY_HEADER = 128;

    private final Path target, tmp;
    private final FileChannel ch;
    private final boolean npy;
    private final int dim;
    private final ByteBuffer buf = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final Thread cleanup; // deletes the temporary file if the JVM is stopped (Ctrl-C) before the commit
    private long rows;
    private boolean committed;

    private EmbeddingWriter(Path target, Path tmp, FileChannel ch, boolean npy, int dim) {
        this.target = target;
        this.tmp = tmp;
        this.ch = ch;
        this.npy = npy;
        this.dim = dim;
        this.cleanup = new Thread(this::discard, "attn-output-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    static void checkFormat(Path target) {
        String n = target.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!n.endsWith(".npy") && !n.endsWith(".jsonl"))
            throw AttnException.badInput(target + ": expected an .npy or .jsonl output file");
    }

    static EmbeddingWriter open(Path target, int dim) {
        checkFormat(target);
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        if (dir == null || !Files.isDirectory(dir)) throw AttnException.badInput(target + ": no such directory");
        Path tmp = dir.resolve("." + abs.getFileName() + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        try {
            FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            EmbeddingWriter w = new EmbeddingWriter(
                    abs,
                    tmp,
                    ch,
                    abs.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".npy"),
                    dim);
            if (w.npy) ch.write(ByteBuffer.wrap(npyHeader(0, dim)));
            return w;
        } catch (IOException e) {
            throw AttnException.badInput(target + ": cannot write (" + e.getMessage() + ")");
        }
    }

    void write(float[][] vectors) {
        try {
            for (float[] v : vectors) {
                if (npy) {
                    if (buf.remaining() < v.length * 4) flush();
                    for (float x : v) buf.putFloat(x);
                } else {
                    StringBuilder sb = new StringBuilder(v.length * 12 + 40);
                    sb.append("{\"index\":").append(rows).append(",\"embedding\":[");
                    for (int k = 0; k < v.length; k++) {
                        if (k > 0) sb.append(',');
                        sb.append(v[k]);
                    }
                    byte[] b = sb.append("]}\n").toString().getBytes(StandardCharsets.UTF_8);
                    if (buf.remaining() < b.length) flush();
                    if (b.length > buf.capacity()) ch.write(ByteBuffer.wrap(b));
                    else buf.put(b);
                }
                rows++;
            }
        } catch (IOException e) {
            throw AttnException.badInput(target + ": cannot write (" + e.getMessage() + ")");
        }
    }

    long rows() {
        return rows;
    }

    /** Finishes the file and renames it into place. */
    void commit() {
        try {
            flush();
            if (npy) ch.write(ByteBuffer.wrap(npyHeader(rows, dim)), 0);
            ch.force(true);
            ch.close();
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            committed = true;
        } catch (IOException e) {
            throw AttnException.badInput(target + ": cannot write (" + e.getMessage() + ")");
        }
    }

    private void flush() throws IOException {
        buf.flip();
        while (buf.hasRemaining()) ch.write(buf);
        buf.clear();
    }

    /** An .npy v1.0 header for float32 {@code (rows, dim)}, padded to {@link #NPY_HEADER} bytes. */
    static byte[] npyHeader(long rows, int dim) {
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + rows + ", " + dim + "), }";
        int len = NPY_HEADER - 10;
        StringBuilder sb = new StringBuilder(dict);
        while (sb.length() < len - 1) sb.append(' ');
        sb.append('\n');
        ByteBuffer b = ByteBuffer.allocate(NPY_HEADER).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) 0x93)
                .put("NUMPY".getBytes(StandardCharsets.US_ASCII))
                .put((byte) 1)
                .put((byte) 0);
        b.putShort((short) len);
        b.put(sb.toString().getBytes(StandardCharsets.US_ASCII));
        return b.array();
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or will run
        }
        if (!committed) discard();
    }

    private void discard() {
        if (committed) return;
        try {
            ch.close();
        } catch (IOException ignored) {
            // the file is being discarded
        }
        try {
            Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
            // best effort: the temporary file's name says what it is
        }
    }
}
