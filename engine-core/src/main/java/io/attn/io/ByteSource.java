package io.attn.io;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Bytes of known total length, read by absolute position. Files and arrays allow any order; a stream source allows
 * only forward reads (all readers here read front to back).
 */
abstract class ByteSource implements Closeable {
    final String name;

    ByteSource(String name) {
        this.name = name;
    }

    /** Total number of bytes. */
    abstract long size();

    /** Fills {@code dst} from its position to its limit with the bytes at {@code pos}; throws EOF if short. */
    abstract void read(long pos, ByteBuffer dst) throws IOException;

    @Override
    public void close() throws IOException {}

    static ByteSource of(Path path) throws IOException {
        IoUtil.refuseSpecialFile(path);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
        long size;
        try {
            size = ch.size();
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return new ByteSource(path.toString()) {
            @Override
            long size() {
                return size;
            }

            @Override
            void read(long pos, ByteBuffer dst) throws IOException {
                long p = pos;
                while (dst.hasRemaining()) {
                    int n = ch.read(dst, p);
                    if (n < 0) throw new EOFException();
                    p += n;
                }
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    static ByteSource of(byte[] bytes, String name) {
        return new ByteSource(name) {
            @Override
            long size() {
                return bytes.length;
            }

            @Override
            void read(long pos, ByteBuffer dst) throws IOException {
                int n = dst.remaining();
                if (pos < 0 || pos + n > bytes.length) throw new EOFException();
                dst.put(bytes, (int) pos, n);
            }
        };
    }

    /** A stream holding exactly {@code length} bytes (the caller has counted them). */
    static ByteSource of(InputStream in, long length, String name) {
        return new ByteSource(name) {
            long at = 0;
            final byte[] tmp = new byte[1 << 16];

            @Override
            long size() {
                return length;
            }

            @Override
            void read(long pos, ByteBuffer dst) throws IOException {
                if (pos < at) throw new IOException("internal: backward read on a stream");
                while (at < pos) {
                    long skipped = in.skip(pos - at);
                    if (skipped <= 0) {
                        if (in.read() < 0) throw new EOFException();
                        skipped = 1;
                    }
                    at += skipped;
                }
                while (dst.hasRemaining()) {
                    int n = in.read(tmp, 0, Math.min(tmp.length, dst.remaining()));
                    if (n < 0) throw new EOFException();
                    dst.put(tmp, 0, n);
                    at += n;
                }
            }
        };
    }
}
