package io.attn.text.onnx;

import io.attn.text.onnx.proto.OnnxProto.StringStringEntryProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto.DataType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Reads the values of ONNX tensors: FLOAT, FLOAT16 and BFLOAT16 widened to float, INT32 and INT64 as long; from
 * {@code raw_data} (little-endian), the typed fields, or external data next to the model.
 *
 * <p>Every read first checks the claimed shape against the bytes the tensor really holds, so a lying shape is a
 * one-line error and never a huge allocation. External data must stay inside the model's directory. Immutable; safe
 * to share.
 */
final class TensorData {
    private static final int MAX_ELEMENTS = Integer.MAX_VALUE - 8;
    private static final long MAP_CHUNK = 1L << 30;
    private static final Set<DataType> FLOATS = Set.of(DataType.FLOAT, DataType.FLOAT16, DataType.BFLOAT16);
    private static final Set<DataType> INTS = Set.of(DataType.INT32, DataType.INT64);
    private static final Set<DataType> BYTES = Set.of(DataType.INT8, DataType.UINT8);
    private static final List<DataType> ORDER = List.of(
            DataType.FLOAT,
            DataType.FLOAT16,
            DataType.BFLOAT16,
            DataType.INT32,
            DataType.INT64,
            DataType.INT8,
            DataType.UINT8);
    private static final Set<DataType> ANY = Set.copyOf(ORDER);

    private final ModelFile file;

    TensorData(ModelFile file) {
        this.file = file;
    }

    /** Where a tensor's bytes are, once checked: raw_data, the typed fields, or a region of an external file. */
    private record Layout(DataType type, int[] dims, int count, Path external, long offset) {}

    /** The dimensions of a FLOAT, FLOAT16, BFLOAT16, INT32 or INT64 tensor, after checking it holds their data. */
    int[] dims(TensorProto t, String what) {
        return layout(t, what, type(t, what, ANY)).dims();
    }

    /** As {@link #dims}, for a tensor that must hold floats (a weight). */
    int[] floatDims(TensorProto t, String what) {
        return layout(t, what, type(t, what, FLOATS)).dims();
    }

    /** The values widened to float, in row-major order. */
    float[] floats(TensorProto t, String what) {
        Layout l = layout(t, what, type(t, what, FLOATS));
        float[] out = new float[l.count()];
        if (l.external() != null) readExternal(l, what, (buf, at) -> decodeFloats(buf, l.type(), out, at));
        else if (t.hasRawData())
            decodeFloats(t.getRawData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN), l.type(), out, 0);
        else if (l.type() == DataType.FLOAT) for (int i = 0; i < out.length; i++) out[i] = t.getFloatData(i);
        else for (int i = 0; i < out.length; i++) out[i] = halfToFloat(l.type(), (short) t.getInt32Data(i));
        return out;
    }

    /** The values of an integer tensor (a shape, indices). */
    long[] longs(TensorProto t, String what) {
        Layout l = layout(t, what, type(t, what, INTS));
        long[] out = new long[l.count()];
        boolean wide = l.type() == DataType.INT64;
        if (l.external() != null) readExternal(l, what, (buf, at) -> decodeLongs(buf, wide, out, at));
        else if (t.hasRawData())
            decodeLongs(t.getRawData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN), wide, out, 0);
        else if (wide) for (int i = 0; i < out.length; i++) out[i] = t.getInt64Data(i);
        else for (int i = 0; i < out.length; i++) out[i] = t.getInt32Data(i);
        return out;
    }

    /** The bytes of an INT8 or UINT8 tensor (quantized weights), in row-major order, as stored. */
    byte[] bytes(TensorProto t, String what) {
        Layout l = layout(t, what, type(t, what, BYTES));
        byte[] out = new byte[l.count()];
        if (l.external() != null) readExternal(l, what, (buf, at) -> buf.get(out, at, buf.remaining()));
        else if (t.hasRawData()) t.getRawData().copyTo(out, 0);
        else for (int i = 0; i < out.length; i++) out[i] = (byte) t.getInt32Data(i);
        return out;
    }

    /** True if the tensor's element type is UINT8. */
    static boolean isUnsigned8(TensorProto t) {
        return t.getDataType() == DataType.UINT8_VALUE;
    }

    /** True if the tensor's element type is INT8 or UINT8. */
    static boolean isByte(TensorProto t) {
        DataType type = DataType.forNumber(t.getDataType());
        return type != null && BYTES.contains(type);
    }

    /** True if the tensor's element type is FLOAT, FLOAT16 or BFLOAT16. */
    static boolean isFloat(TensorProto t) {
        DataType type = DataType.forNumber(t.getDataType());
        return type != null && FLOATS.contains(type);
    }

    private DataType type(TensorProto t, String what, Set<DataType> accepted) {
        DataType type = DataType.forNumber(t.getDataType());
        if (type != null && accepted.contains(type)) return type;
        String name = type == null ? "data type " + t.getDataType() : type.name();
        List<String> names =
                ORDER.stream().filter(accepted::contains).map(DataType::name).toList();
        String expected = String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast();
        throw file.bad(what + " holds " + name + " values, not " + expected);
    }

    private static int width(DataType type) {
        return switch (type) {
            case FLOAT16, BFLOAT16 -> 2;
            case INT64 -> 8;
            case INT8, UINT8 -> 1;
            default -> 4;
        };
    }

    private Layout layout(TensorProto t, String what, DataType type) {
        if (t.hasSegment()) throw file.bad(what + " is stored in segments, which are not supported");
        int[] dims = new int[t.getDimsCount()];
        long count = 1;
        for (int i = 0; i < dims.length; i++) {
            long d = t.getDims(i);
            if (d < 0 || d > Integer.MAX_VALUE)
                throw file.bad(what + " has a dimension of " + d + " in " + t.getDimsList());
            if (d != 0 && count > Long.MAX_VALUE / d) throw file.bad(what + " claims more than 2^63 elements");
            count *= d;
            dims[i] = (int) d;
        }
        int width = width(type);
        Path external = null;
        long offset = 0;
        if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
            External e = external(t, what);
            external = e.path();
            offset = e.offset();
            checkBytes(what, count, width, e.length(), e.length() + " bytes in '" + e.location() + "'");
        } else if (t.hasRawData()) {
            checkBytes(what, count, width, t.getRawData().size(), t.getRawData().size() + " bytes");
        } else {
            int held =
                    switch (type) {
                        case FLOAT -> t.getFloatDataCount();
                        case INT64 -> t.getInt64DataCount();
                        default -> t.getInt32DataCount();
                    };
            if (held != count) throw file.bad(what + " claims " + count + " elements but holds " + held + " values");
        }
        if (count > MAX_ELEMENTS) throw file.bad(what + " has " + count + " elements, more than one array can hold");
        return new Layout(type, dims, (int) count, external, offset);
    }

    private void checkBytes(String what, long count, int width, long bytes, String held) {
        if (bytes % width != 0 || bytes / width != count)
            throw file.bad(what + " claims " + count + " elements but holds " + held);
    }

    private record External(String location, Path path, long offset, long length) {}

    /** The external data reference, checked: inside the model's directory, and the region inside the file. */
    private External external(TensorProto t, String what) {
        String location = null;
        long offset = 0;
        long length = -1;
        for (StringStringEntryProto e : t.getExternalDataList()) {
            switch (e.getKey()) {
                case "location" -> location = e.getValue();
                case "offset" -> offset = number(what, "offset", e.getValue());
                case "length" -> length = number(what, "length", e.getValue());
                default -> {} // checksum and the like: not needed to read the data
            }
        }
        if (location == null || location.isEmpty()) throw file.bad(what + " has external data but no location");
        Path path = inside(what, location);
        long size;
        try {
            if (!Files.isRegularFile(path)) throw new NoSuchFileException(location);
            size = Files.size(path);
        } catch (IOException e) {
            throw file.bad(what + ": cannot read its external data file '" + location + "'");
        }
        if (offset > size)
            throw file.bad(what + ": external data offset " + offset + " is past the end of '" + location + "' (" + size
                    + " bytes)");
        if (length < 0) length = size - offset;
        else if (length > size - offset)
            throw file.bad(what + ": external data '" + location + "' holds " + (size - offset) + " bytes from offset "
                    + offset + ", not the " + length + " its length says");
        return new External(location, path, offset, length);
    }

    private Path inside(String what, String location) {
        Path rel;
        try {
            rel = Path.of(location);
        } catch (InvalidPathException e) {
            throw file.bad(what + ": external data location '" + location + "' is not a file name");
        }
        boolean escapes = rel.isAbsolute() || rel.getRoot() != null;
        for (Path part : rel) escapes |= part.toString().equals("..");
        Path path = file.dir().resolve(rel).normalize();
        if (escapes || !path.startsWith(file.dir()))
            throw file.bad(what + ": external data location '" + location + "' is outside the model's directory");
        return path;
    }

    private long number(String what, String key, String value) {
        try {
            long v = Long.parseLong(value.trim());
            if (v >= 0) return v;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw file.bad(what + ": external data " + key + " '" + value + "' is not a byte count");
    }

    private interface Chunk {
        void decode(ByteBuffer littleEndian, int firstElement);
    }

    /** Maps the external region in chunks of at most 1 GiB (whole elements) and decodes each. */
    private void readExternal(Layout l, String what, Chunk chunk) {
        int width = width(l.type());
        long total = (long) l.count() * width;
        long step = MAP_CHUNK - MAP_CHUNK % width;
        try (FileChannel ch = FileChannel.open(l.external(), StandardOpenOption.READ)) {
            for (long done = 0; done < total; done += step) {
                long n = Math.min(step, total - done);
                ByteBuffer buf = ch.map(FileChannel.MapMode.READ_ONLY, l.offset() + done, n);
                chunk.decode(buf.order(ByteOrder.LITTLE_ENDIAN), (int) (done / width));
            }
        } catch (IOException e) {
            throw file.bad(what + ": cannot read its external data (" + e.getMessage() + ")");
        }
    }

    private static void decodeFloats(ByteBuffer buf, DataType type, float[] out, int at) {
        if (type == DataType.FLOAT) {
            buf.asFloatBuffer().get(out, at, buf.remaining() / 4);
            return;
        }
        int n = buf.remaining() / 2;
        int base = buf.position();
        for (int i = 0; i < n; i++) out[at + i] = halfToFloat(type, buf.getShort(base + 2 * i));
    }

    private static float halfToFloat(DataType type, short bits) {
        return type == DataType.FLOAT16 ? Float.float16ToFloat(bits) : Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    private static void decodeLongs(ByteBuffer buf, boolean wide, long[] out, int at) {
        if (wide) {
            buf.asLongBuffer().get(out, at, buf.remaining() / 8);
            return;
        }
        int n = buf.remaining() / 4;
        int base = buf.position();
        for (int i = 0; i < n; i++) out[at + i] = buf.getInt(base + 4 * i);
    }

    static String shape(int[] dims) {
        return Arrays.toString(dims).replace('[', '(').replace(']', ')');
    }
}
