package io.attn.io;

import io.attn.AttnException;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The safetensors format: an 8-byte little-endian header length N, N bytes of JSON header, then the data section.
 * Header entries are {@code {"dtype":..,"shape":[..],"data_offsets":[begin,end]}} with offsets relative to the data
 * section; the optional {@code __metadata__} entry is a string-to-string map.
 *
 * <p>Reading accepts dtypes F32, F16, BF16, F64 and (for ids and masks) I64, I32, I16, I8, U8, BOOL, all widened to
 * float32. Validation follows the reference implementation: header length at most {@link #MAX_HEADER_BYTES} and within
 * the file, each {@code end - begin == numel * dtype size}, and the tensors' byte ranges tile the data section exactly
 * (no overlap, no gap, nothing after the last tensor); duplicate names, unknown keys and unknown dtypes are errors.
 * Tensors are returned in header order.
 *
 * <p>Writing produces F32 tensors (or F16 / BF16, and I8 for int8 tensors) laid out contiguously in the map's
 * insertion order (the reference implementation instead sorts by dtype then name; both are valid files), the header
 * padded with spaces to a multiple of 8 bytes.
 */
public final class SafeTensors {
    /** Longest JSON header accepted (the reference implementation's limit). */
    public static final long MAX_HEADER_BYTES = 100L << 20;

    private static final String META = "__metadata__";

    private SafeTensors() {}

    /** The content of a safetensors file: tensors in header order and the {@code __metadata__} map (maybe empty). */
    public record File(Map<String, Tensor> tensors, Map<String, String> metadata) {}

    /** Reads a {@code .safetensors} file. */
    public static File read(Path path) {
        return read(path, false);
    }

    /**
     * Reads a {@code .safetensors} file; with {@code keepInt8}, {@code I8} tensors stay int8 ({@link
     * io.attn.tensor.DType#I8}: quantized weights) instead of being widened to float.
     */
    public static File read(Path path, boolean keepInt8) {
        try (ByteSource src = ByteSource.of(path)) {
            return read(src, keepInt8);
        } catch (IOException e) {
            throw IoUtil.io(path.toString(), "read", e);
        }
    }

    /** Reads safetensors content from memory; {@code name} labels error messages. */
    public static File read(byte[] bytes, String name) {
        try (ByteSource src = ByteSource.of(bytes, name)) {
            return read(src);
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
    }

    private record Info(String name, Num num, long[] shape, long begin, long end) {}

    /** What a file starting with {@code head} (8 bytes) is when it is a format often mistaken for this one, or null. */
    private static String otherFormat(byte[] head) {
        String h = new String(head, StandardCharsets.ISO_8859_1);
        if (h.startsWith("\u0093NUMPY")) return "a NumPy .npy array";
        if (h.startsWith("PK\u0003\u0004"))
            return "a zip archive (an .npz, or a PyTorch .pt/.pth checkpoint: tools/export_torch.py exports a module's"
                    + " weights as .safetensors)";
        if (h.stripLeading().startsWith("{")) return "a JSON file";
        return null;
    }

    static File read(ByteSource src) throws IOException {
        return read(src, false);
    }

    static File read(ByteSource src, boolean keepInt8) throws IOException {
        String name = src.name;
        long size = src.size();
        if (size < 8)
            throw IoUtil.bad(name, "truncated: " + IoUtil.bytes(size) + ", too short to hold the 8-byte header length");
        ByteBuffer lb = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        src.read(0, lb);
        long n = lb.getLong(0);
        String nText = Long.toUnsignedString(n);
        String other = otherFormat(lb.array());
        if (other != null && (n < 0 || n > size - 8))
            throw IoUtil.bad(name, "this is " + other + ", not a .safetensors file");
        if (n < 0 || n > MAX_HEADER_BYTES)
            throw IoUtil.bad(
                    name, "header length " + nText + " exceeds the " + IoUtil.bytes(MAX_HEADER_BYTES) + " cap");
        long cap = IoUtil.heapCap(MAX_HEADER_BYTES);
        if (n > cap)
            throw IoUtil.bad(
                    name,
                    "header length " + nText + " exceeds " + IoUtil.bytes(cap)
                            + ", the most this JVM's heap can parse (raise -Xmx)");
        if (n > size - 8)
            throw IoUtil.bad(
                    name, "truncated: header length " + nText + " but only " + IoUtil.bytes(size - 8) + " follow");
        if (n < 2) throw IoUtil.bad(name, "header length " + nText + " is too small for a JSON object");
        ByteBuffer hb = ByteBuffer.allocate((int) n);
        src.read(8, hb);
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(hb.flip())
                    .toString();
        } catch (CharacterCodingException e) {
            throw IoUtil.bad(name, "header is not valid UTF-8");
        }
        if (!text.startsWith("{")) throw IoUtil.bad(name, "header does not start with '{'");
        Object parsed = Json.parse(text, name + " header");
        if (!(parsed instanceof Map<?, ?> header)) throw IoUtil.bad(name, "header is not a JSON object");

        long dataLen = size - 8 - n;
        Map<String, String> meta = new LinkedHashMap<>();
        List<Info> infos = new ArrayList<>();
        for (Map.Entry<?, ?> e : header.entrySet()) {
            String key = (String) e.getKey();
            if (key.equals(META)) {
                if (!(e.getValue() instanceof Map<?, ?> m)) throw IoUtil.bad(name, "__metadata__ is not an object");
                for (Map.Entry<?, ?> me : m.entrySet()) {
                    if (!(me.getValue() instanceof String v))
                        throw IoUtil.bad(name, "__metadata__ value for '" + me.getKey() + "' is not a string");
                    meta.put((String) me.getKey(), v);
                }
            } else infos.add(info(name, key, e.getValue(), dataLen));
        }

        List<Info> sorted = new ArrayList<>(infos);
        sorted.sort(Comparator.comparingLong(Info::begin).thenComparingLong(Info::end));
        long at = 0;
        Info prev = null;
        for (Info t : sorted) {
            if (t.begin < at)
                throw IoUtil.bad(
                        name,
                        "tensor '" + t.name + "' data_offsets " + range(t) + " overlap tensor '" + prev.name + "' "
                                + range(prev));
            if (t.begin > at)
                throw IoUtil.bad(
                        name,
                        "gap in the data section: no tensor covers bytes [" + at + ", " + t.begin + ") (before tensor '"
                                + t.name + "')");
            at = t.end;
            prev = t;
        }
        if (at != dataLen)
            throw IoUtil.bad(
                    name,
                    "data section has " + IoUtil.bytes(dataLen - at) + " after the last tensor (tensors end at byte "
                            + at + " of " + dataLen + ")");

        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Info t : infos) {
            long numel = (t.end - t.begin) / t.num.size;
            int[] dims = IoUtil.toIntDims(t.shape, name);
            if (keepInt8 && t.num == Num.I8) {
                if (numel > Integer.MAX_VALUE - 8)
                    throw IoUtil.bad(name, "tensor '" + t.name + "' " + IoUtil.tuple(t.shape) + " is too large");
                ByteBuffer bytes = ByteBuffer.allocate((int) numel);
                src.read(8 + n + t.begin, bytes);
                tensors.put(t.name, Tensor.ofInt8(bytes.array(), dims));
                continue;
            }
            float[] data = IoUtil.floats(numel, name, "tensor '" + t.name + "' " + IoUtil.tuple(t.shape));
            t.num.readInto(src, 8 + n + t.begin, ByteOrder.LITTLE_ENDIAN, data, 0, data.length);
            tensors.put(t.name, Tensor.of(Shape.of(dims), data));
        }
        return new File(Collections.unmodifiableMap(tensors), Collections.unmodifiableMap(meta));
    }

    private static String range(Info t) {
        return "[" + t.begin + ", " + t.end + "]";
    }

    private static Info info(String file, String tname, Object v, long dataLen) {
        String who = "tensor '" + tname + "'";
        if (!(v instanceof Map<?, ?> m)) throw IoUtil.bad(file, who + " is not a JSON object");
        for (Object k : m.keySet())
            if (!k.equals("dtype") && !k.equals("shape") && !k.equals("data_offsets"))
                throw IoUtil.bad(file, who + " has unexpected key '" + k + "'");
        if (!(m.get("dtype") instanceof String dt)) throw IoUtil.bad(file, who + " has no string 'dtype'");
        Num num =
                switch (dt) {
                    case "F32" -> Num.F32;
                    case "F16" -> Num.F16;
                    case "BF16" -> Num.BF16;
                    case "F64" -> Num.F64;
                    case "I64" -> Num.I64;
                    case "I32" -> Num.I32;
                    case "I16" -> Num.I16;
                    case "I8" -> Num.I8;
                    case "U8" -> Num.U8;
                    case "BOOL" -> Num.BOOL;
                    default ->
                        throw IoUtil.bad(
                                file,
                                who + " has unsupported dtype '" + dt
                                        + "' (supported: F32 F16 BF16 F64 I64 I32 I16 I8 U8 BOOL)");
                };
        if (!(m.get("shape") instanceof List<?> sl)) throw IoUtil.bad(file, who + " has no 'shape' array");
        if (sl.size() > 64) throw IoUtil.bad(file, who + " has more than 64 dimensions");
        long[] shape = new long[sl.size()];
        for (int k = 0; k < shape.length; k++) {
            if (!(sl.get(k) instanceof Long d) || d < 0)
                throw IoUtil.bad(file, who + " shape " + sl + " must hold non-negative integers");
            shape[k] = d;
        }
        if (!(m.get("data_offsets") instanceof List<?> ol) || ol.size() != 2)
            throw IoUtil.bad(file, who + " needs 'data_offsets' [begin, end]");
        if (!(ol.get(0) instanceof Long b) || !(ol.get(1) instanceof Long e) || b < 0 || e < b)
            throw IoUtil.bad(file, who + " data_offsets " + ol + " must be integers with 0 <= begin <= end");
        if (e > dataLen)
            throw IoUtil.bad(
                    file,
                    who + " data_offsets [" + b + ", " + e + "] run past the end of the data section ("
                            + IoUtil.bytes(dataLen) + ")");
        long numel = IoUtil.numel(shape);
        long need = numel < 0 ? -1 : (numel > Long.MAX_VALUE / num.size ? -1 : numel * num.size);
        if (need != e - b)
            throw IoUtil.bad(
                    file,
                    who + " shape " + IoUtil.tuple(shape) + " " + dt + " needs "
                            + (need < 0 ? "more than 2^63 bytes" : IoUtil.bytes(need)) + " but data_offsets [" + b
                            + ", " + e + "] hold " + IoUtil.bytes(e - b));
        return new Info(tname, num, shape, b, e);
    }

    // ------------------------------------------------------------ writing

    /** Writes F32 tensors (map order) and optional metadata, atomically. */
    public static void write(Path path, Map<String, Tensor> tensors, Map<String, String> metadata) {
        write(path, tensors, metadata, DType.F32);
    }

    /**
     * Writes tensors (map order) and optional metadata, atomically: {@link DType#I8} tensors as {@code I8}, float ones
     * as {@code floats} ({@link DType#F32}, {@link DType#F16} or {@link DType#BF16}, rounded to nearest, ties to even).
     *
     * @throws AttnException BAD_INPUT naming the tensor and the index of a finite value that the half-precision type
     *     cannot hold (it would become infinite); nothing is written then
     */
    public static void write(Path path, Map<String, Tensor> tensors, Map<String, String> metadata, DType floats) {
        if (floats != DType.F32 && floats != DType.F16 && floats != DType.BF16)
            throw AttnException.badInput(path + ": floats are written as F32, F16 or BF16, not " + floats);
        if (floats != DType.F32) checkNarrowing(tensors, floats, path.toString());
        byte[] header = header(tensors, metadata, path.toString(), floats);
        AtomicFiles.write(path, out -> writeBody(out, header, tensors, floats));
    }

    /** Fails naming the first finite value (tensor, index) that {@code to} cannot hold. */
    private static void checkNarrowing(Map<String, Tensor> tensors, DType to, String file) {
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Tensor t = e.getValue();
            if (t.dtype() != DType.F32) continue;
            float[] d = t.data();
            for (int i = 0; i < d.length; i++) {
                float v = d[i];
                if (Float.isFinite(v) && Float.isInfinite(narrowed(v, to)))
                    throw AttnException.badInput(file + ": tensor '" + e.getKey() + "' holds " + v + " at "
                            + t.indexString(i) + ", beyond " + (to == DType.F16 ? "float16" : "bfloat16")
                            + "'s range (largest finite " + (to == DType.F16 ? "65504" : "3.3895314e38")
                            + "): nothing written");
            }
        }
    }

    /** {@code v} rounded to {@code to} and widened back. */
    static float narrowed(float v, DType to) {
        return to == DType.F16 ? Half.toFloat(Half.fromFloat(v)) : Bf16.toFloat(Bf16.fromFloat(v));
    }

    /** The safetensors bytes for F32 tensors (map order) and optional metadata. */
    public static byte[] toBytes(Map<String, Tensor> tensors, Map<String, String> metadata) {
        byte[] header = header(tensors, metadata, "safetensors", DType.F32);
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try {
            writeBody(bos, header, tensors, DType.F32);
        } catch (IOException e) {
            throw new AttnException(AttnException.Code.INTERNAL, "in-memory write failed", e);
        }
        return bos.toByteArray();
    }

    private static byte[] header(Map<String, Tensor> tensors, Map<String, String> metadata, String file, DType floats) {
        Map<String, Object> h = new LinkedHashMap<>();
        if (metadata != null && !metadata.isEmpty()) h.put(META, new LinkedHashMap<>(metadata));
        long at = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            if (e.getKey().equals(META)) throw IoUtil.bad(file, "'__metadata__' cannot be a tensor name");
            Tensor t = e.getValue();
            List<Long> shape = new ArrayList<>();
            for (int d : t.shape().dims()) shape.add((long) d);
            DType as = t.dtype() == DType.I8 ? DType.I8 : floats;
            long end = at + (long) as.byteSize() * t.size();
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("dtype", as.name());
            info.put("shape", shape);
            info.put("data_offsets", List.of(at, end));
            h.put(e.getKey(), info);
            at = end;
        }
        byte[] json = Json.write(h).getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        ByteBuffer b = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(padded).put(json);
        while (b.hasRemaining()) b.put((byte) ' ');
        return b.array();
    }

    private static void writeBody(OutputStream out, byte[] header, Map<String, Tensor> tensors, DType floats)
            throws IOException {
        out.write(header);
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (Tensor t : tensors.values()) {
            if (t.dtype() == DType.I8) {
                out.write(t.int8());
                continue;
            }
            float[] d = t.data();
            if (floats != DType.F32) {
                for (int off = 0; off < d.length; ) {
                    int k = Math.min(d.length - off, buf.capacity() / 2);
                    buf.clear();
                    for (int i = 0; i < k; i++)
                        buf.putShort(floats == DType.F16 ? Half.fromFloat(d[off + i]) : Bf16.fromFloat(d[off + i]));
                    out.write(buf.array(), 0, k * 2);
                    off += k;
                }
                continue;
            }
            for (int off = 0; off < d.length; ) {
                int k = Math.min(d.length - off, buf.capacity() / 4);
                buf.clear();
                buf.asFloatBuffer().put(d, off, k);
                out.write(buf.array(), 0, k * 4);
                off += k;
            }
        }
    }
}
