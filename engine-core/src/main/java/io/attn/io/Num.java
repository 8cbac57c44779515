package io.attn.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Element encodings the readers accept, each widened to float32 on load. */
enum Num {
    F32(4),
    F64(8),
    F16(2),
    BF16(2),
    I64(8),
    I32(4),
    I16(2),
    I8(1),
    U64(8),
    U32(4),
    U16(2),
    U8(1),
    BOOL(1);

    final int size;

    Num(int size) {
        this.size = size;
    }

    /** The dtype's name as NumPy and PyTorch spell it: {@code float32}, {@code bfloat16}, {@code int64}, {@code bool}. */
    String dtypeName() {
        return this == BOOL
                ? "bool"
                : this == BF16
                        ? "bfloat16"
                        : switch (name().charAt(0)) {
                            case 'F' -> "float" + name().substring(1);
                            case 'I' -> "int" + name().substring(1);
                            default -> "uint" + name().substring(1);
                        };
    }

    private static final int CHUNK_BYTES = 1 << 18;

    /**
     * Reads {@code n} elements starting at byte {@code pos} of {@code src} into {@code out[off..off+n)}, converting to
     * float. The caller has checked that the bytes exist.
     */
    void readInto(ByteSource src, long pos, ByteOrder order, float[] out, int off, int n) throws IOException {
        int perChunk = Math.max(1, CHUNK_BYTES / size);
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min((long) perChunk * size, (long) n * size))
                .order(order);
        int done = 0;
        while (done < n) {
            int k = Math.min(perChunk, n - done);
            buf.clear().limit(k * size);
            src.read(pos + (long) done * size, buf);
            buf.flip();
            decode(buf, out, off + done, k);
            done += k;
        }
    }

    /** Decodes {@code n} elements from {@code bb} (byte order already set) into {@code out}. */
    void decode(ByteBuffer bb, float[] out, int off, int n) {
        switch (this) {
            case F32 -> {
                bb.asFloatBuffer().get(out, off, n);
                bb.position(bb.position() + n * 4);
            }
            case F64 -> {
                for (int i = 0; i < n; i++) out[off + i] = (float) bb.getDouble();
            }
            case F16 -> {
                for (int i = 0; i < n; i++) out[off + i] = Half.toFloat(bb.getShort());
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) out[off + i] = Bf16.toFloat(bb.getShort());
            }
            case I64 -> {
                for (int i = 0; i < n; i++) out[off + i] = (float) bb.getLong();
            }
            case I32 -> {
                for (int i = 0; i < n; i++) out[off + i] = (float) bb.getInt();
            }
            case I16 -> {
                for (int i = 0; i < n; i++) out[off + i] = bb.getShort();
            }
            case I8 -> {
                for (int i = 0; i < n; i++) out[off + i] = bb.get();
            }
            case U64 -> {
                for (int i = 0; i < n; i++) out[off + i] = unsignedLongToFloat(bb.getLong());
            }
            case U32 -> {
                for (int i = 0; i < n; i++) out[off + i] = (float) (bb.getInt() & 0xffffffffL);
            }
            case U16 -> {
                for (int i = 0; i < n; i++) out[off + i] = bb.getShort() & 0xffff;
            }
            case U8 -> {
                for (int i = 0; i < n; i++) out[off + i] = bb.get() & 0xff;
            }
            case BOOL -> {
                for (int i = 0; i < n; i++) out[off + i] = bb.get() != 0 ? 1f : 0f;
            }
        }
    }

    static float unsignedLongToFloat(long v) {
        if (v >= 0) return (float) v;
        // halve (keeping the sticky low bit so rounding stays correct), convert, double
        return (float) ((v >>> 1) | (v & 1)) * 2f;
    }
}
