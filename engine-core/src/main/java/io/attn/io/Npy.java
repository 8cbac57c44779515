package io.attn.io;

import io.attn.AttnException;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * NumPy {@code .npy} files (format versions 1.0, 2.0 and 3.0).
 *
 * <p>Reading accepts dtypes {@code f4 f8 f2} in either byte order, {@code b1} (bool: 1 for true), and the integers
 * {@code i8 i4 i2 i1 u8 u4 u2 u1}; everything is converted to float32 (integers round to the nearest float, exact below
 * 2^24). {@code fortran_order: True} arrays are read correctly: the data is transposed into C (row-major) order. The
 * header dict is parsed strictly: exactly the keys {@code descr}, {@code fortran_order}, {@code shape}; structured and
 * object dtypes are refused. Declared sizes are checked against the real length before anything is allocated, and the
 * data must end exactly where the file ends.
 *
 * <p>Writing produces float32 little-endian C-order files, version 1.0 (2.0 only when the header would exceed 64 KiB),
 * with the header padded to a multiple of 64 bytes like numpy does.
 */
public final class Npy {
    /** Longest header accepted (numpy itself refuses headers over 10 000 bytes by default). */
    public static final int MAX_HEADER_BYTES = 1 << 20;

    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};

    private Npy() {}

    /**
     * An array as read (widened to float32) and the dtype the file stores it in, as NumPy names it ({@code float32},
     * {@code float16}, {@code bool}, {@code int64}, ...): what a mask's meaning depends on.
     */
    public record Typed(Tensor tensor, String dtype) {
        public boolean isBool() {
            return dtype.equals("bool");
        }

        public boolean isFloat() {
            return dtype.startsWith("float") || dtype.equals("bfloat16");
        }
    }

    /** Reads a {@code .npy} file. */
    public static Tensor read(Path path) {
        return readTyped(path).tensor();
    }

    /** Reads a {@code .npy} file with its stored dtype. */
    public static Typed readTyped(Path path) {
        try (ByteSource src = ByteSource.of(path)) {
            return read(src);
        } catch (IOException e) {
            throw IoUtil.io(path.toString(), "read", e);
        }
    }

    /** Reads {@code .npy} content from memory; {@code name} labels error messages. */
    public static Tensor read(byte[] bytes, String name) {
        try (ByteSource src = ByteSource.of(bytes, name)) {
            return read(src).tensor();
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
    }

    /**
     * Reads {@code .npy} content from a stream that holds exactly {@code length} bytes (as counted by the caller, e.g.
     * an inflated npz entry); {@code name} labels error messages.
     */
    public static Tensor read(InputStream in, long length, String name) {
        return readTyped(in, length, name).tensor();
    }

    /** {@link #read(InputStream, long, String)} with the stored dtype. */
    static Typed readTyped(InputStream in, long length, String name) {
        try (ByteSource src = ByteSource.of(in, length, name)) {
            return read(src);
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
    }

    private record Header(Num num, ByteOrder order, boolean fortran, long[] shape) {}

    /**
     * What the header at the start of {@code in} claims, without reading the data: {@code {total bytes of the .npy
     * (prefix + header + data), bytes of the float32 tensor it would become}}, or null when the header cannot be read
     * (then {@link #read(InputStream, long, String)} reports the precise problem). Lets a container (npz) refuse an
     * entry whose claimed size is absurd before inflating it.
     */
    static long[] peekClaimedBytes(InputStream in) throws IOException {
        byte[] pre = in.readNBytes(12);
        if (pre.length < 10) return null;
        for (int k = 0; k < MAGIC.length; k++) if (pre[k] != MAGIC[k]) return null;
        int major = pre[6] & 0xff;
        if (major < 1 || major > 3 || (major > 1 && pre.length < 12)) return null;
        ByteBuffer b = ByteBuffer.wrap(pre).order(ByteOrder.LITTLE_ENDIAN);
        int prefix = major == 1 ? 10 : 12;
        long hlen = major == 1 ? (b.getShort(8) & 0xffff) : (b.getInt(8) & 0xffffffffL);
        if (hlen > MAX_HEADER_BYTES || hlen < pre.length - prefix) return null;
        byte[] rest = in.readNBytes((int) hlen - (pre.length - prefix));
        byte[] hb = new byte[(int) hlen];
        System.arraycopy(pre, prefix, hb, 0, pre.length - prefix);
        System.arraycopy(rest, 0, hb, pre.length - prefix, rest.length);
        if (pre.length - prefix + rest.length < hlen) return null;
        Header h;
        try {
            h = parseHeader(new String(hb, major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1), "peek");
        } catch (AttnException e) {
            return null;
        }
        long numel = IoUtil.numel(h.shape);
        if (numel < 0) return new long[] {Long.MAX_VALUE, Long.MAX_VALUE};
        long data = numel > Long.MAX_VALUE / 8 ? Long.MAX_VALUE : numel * h.num.size;
        long floats = numel > Long.MAX_VALUE / 4 ? Long.MAX_VALUE : numel * 4;
        return new long[] {data > Long.MAX_VALUE - prefix - hlen ? Long.MAX_VALUE : prefix + hlen + data, floats};
    }

    static Typed read(ByteSource src) throws IOException {
        String name = src.name;
        long size = src.size();
        ByteBuffer pre = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        src.read(0, pre.limit((int) Math.min(size, 8)));
        for (int k = 0; k < MAGIC.length; k++) {
            if (k >= size)
                throw IoUtil.bad(name, "truncated: " + IoUtil.bytes(size) + ", too short to be an .npy file");
            if (pre.get(k) != MAGIC[k]) throw IoUtil.bad(name, "not an .npy file (bad magic bytes)");
        }
        if (size < 8) throw IoUtil.bad(name, "truncated inside the .npy version bytes");
        int major = pre.get(6) & 0xff, minor = pre.get(7) & 0xff;
        if (major < 1 || major > 3 || minor != 0)
            throw IoUtil.bad(
                    name, "unsupported .npy format version " + major + "." + minor + " (1.0, 2.0, 3.0 are read)");
        int prefix = major == 1 ? 10 : 12;
        if (size < prefix) throw IoUtil.bad(name, "truncated inside the .npy header length");
        src.read(8, pre.limit(prefix).position(8));
        long hlen = major == 1 ? (pre.getShort(8) & 0xffff) : (pre.getInt(8) & 0xffffffffL);
        if (hlen > MAX_HEADER_BYTES)
            throw IoUtil.bad(name, "header length " + hlen + " exceeds the " + IoUtil.bytes(MAX_HEADER_BYTES) + " cap");
        if (prefix + hlen > size)
            throw IoUtil.bad(
                    name, "truncated: header declares " + hlen + " bytes but only " + (size - prefix) + " follow");
        ByteBuffer hb = ByteBuffer.allocate((int) hlen);
        src.read(prefix, hb);
        String text;
        if (major == 3) {
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
        } else text = new String(hb.array(), StandardCharsets.ISO_8859_1);
        Header h = parseHeader(text, name);

        long numel = IoUtil.numel(h.shape);
        String shapeText = IoUtil.tuple(h.shape);
        if (numel < 0) throw IoUtil.bad(name, "header shape " + shapeText + " has more elements than fit in 64 bits");
        long avail = size - prefix - hlen;
        long need;
        try {
            need = Math.multiplyExact(numel, (long) h.num.size);
        } catch (ArithmeticException e) {
            need = Long.MAX_VALUE;
        }
        if (need > avail)
            throw IoUtil.bad(
                    name,
                    "header declares shape " + shapeText + " = " + IoUtil.bytes(need) + " but the file holds "
                            + IoUtil.bytes(avail) + " of data");
        if (need < avail)
            throw IoUtil.bad(
                    name,
                    "file has " + IoUtil.bytes(avail - need) + " after the " + IoUtil.bytes(need)
                            + " of data that shape " + shapeText + " declares");
        int[] dims = IoUtil.toIntDims(h.shape, name);
        float[] data = IoUtil.floats(numel, name, "array " + shapeText);
        h.num.readInto(src, prefix + hlen, h.order, data, 0, data.length);
        if (h.fortran && dims.length > 1) data = fortranToC(data, dims);
        return new Typed(Tensor.of(Shape.of(dims), data), h.num.dtypeName());
    }

    /** Reorders column-major (first index fastest) data of shape {@code d} into row-major order. */
    static float[] fortranToC(float[] f, int[] d) {
        int r = d.length;
        float[] c = new float[f.length];
        if (f.length == 0) return c;
        long[] cStride = new long[r];
        long s = 1;
        for (int k = r - 1; k >= 0; k--) {
            cStride[k] = s;
            s *= d[k];
        }
        int[] idx = new int[r];
        long co = 0;
        for (int fi = 0; fi < f.length; fi++) {
            c[(int) co] = f[fi];
            for (int k = 0; k < r; k++) { // advance the F-order counter: first index fastest
                idx[k]++;
                co += cStride[k];
                if (idx[k] < d[k]) break;
                co -= cStride[k] * d[k];
                idx[k] = 0;
            }
        }
        return c;
    }

    // ------------------------------------------------------------ header dict

    private static Header parseHeader(String text, String name) {
        HeaderParser p = new HeaderParser(text, name);
        return p.parse();
    }

    /** A strict parser for the Python dict literal numpy writes as the header. */
    private static final class HeaderParser {
        final String s;
        final String name;
        int i;

        HeaderParser(String s, String name) {
            this.s = s;
            this.name = name;
        }

        AttnException err(String problem) {
            return IoUtil.bad(name, "bad .npy header at character " + i + ": " + problem);
        }

        void ws() {
            while (i < s.length()
                    && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n' || s.charAt(i) == '\r')) i++;
        }

        boolean peek(char c) {
            ws();
            return i < s.length() && s.charAt(i) == c;
        }

        void expect(char c) {
            ws();
            if (i >= s.length()) throw err("ends early (expected '" + c + "')");
            if (s.charAt(i) != c) throw err("expected '" + c + "'");
            i++;
        }

        Header parse() {
            String descr = null;
            Boolean fortran = null;
            long[] shape = null;
            expect('{');
            while (!peek('}')) {
                String key = str();
                expect(':');
                switch (key) {
                    case "descr" -> {
                        if (descr != null) throw err("duplicate key 'descr'");
                        if (peek('[')) throw IoUtil.bad(name, "structured dtypes are not supported");
                        descr = str();
                    }
                    case "fortran_order" -> {
                        if (fortran != null) throw err("duplicate key 'fortran_order'");
                        fortran = bool();
                    }
                    case "shape" -> {
                        if (shape != null) throw err("duplicate key 'shape'");
                        shape = tuple();
                    }
                    default -> throw err("unexpected key '" + key + "'");
                }
                if (peek(',')) i++;
                else if (!peek('}')) throw err("expected ',' or '}'");
            }
            i++;
            ws();
            if (i != s.length()) throw err("unexpected text after the header dict");
            if (descr == null || fortran == null || shape == null)
                throw IoUtil.bad(name, "bad .npy header: needs the keys 'descr', 'fortran_order' and 'shape'");
            return dtype(descr, fortran, shape);
        }

        String str() {
            ws();
            if (i >= s.length()) throw err("ends early (expected a string)");
            char q = s.charAt(i);
            if (q != '\'' && q != '"') throw err("expected a quoted string");
            int end = s.indexOf(q, i + 1);
            if (end < 0) throw err("unterminated string");
            String v = s.substring(i + 1, end);
            if (v.indexOf('\\') >= 0 || v.indexOf('\n') >= 0) throw err("unsupported characters in a string");
            i = end + 1;
            return v;
        }

        boolean bool() {
            ws();
            if (s.startsWith("True", i)) {
                i += 4;
                return true;
            }
            if (s.startsWith("False", i)) {
                i += 5;
                return false;
            }
            throw err("expected True or False");
        }

        long[] tuple() {
            expect('(');
            long[] dims = new long[4];
            int n = 0;
            boolean trailingComma = false;
            while (!peek(')')) {
                long v = integer();
                if (n == dims.length) dims = java.util.Arrays.copyOf(dims, n * 2);
                dims[n++] = v;
                trailingComma = false;
                if (peek(',')) {
                    i++;
                    trailingComma = true;
                } else if (!peek(')')) throw err("expected ',' or ')' in the shape");
                if (n > 64) throw err("shape has more than 64 dimensions");
            }
            i++;
            if (n == 1 && !trailingComma) throw err("shape (" + dims[0] + ") is not a tuple (numpy writes (n,))");
            return java.util.Arrays.copyOf(dims, n);
        }

        long integer() {
            ws();
            int start = i;
            if (i < s.length() && s.charAt(i) == '-') i++;
            int digits = i;
            while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') i++;
            if (i == digits) throw err("expected an integer in the shape");
            String t = s.substring(start, i);
            if (i < s.length() && s.charAt(i) == 'L') i++; // Python 2 long suffix, seen in old files
            if (t.startsWith("-")) {
                i = start;
                throw err("negative dimension " + t + " in the shape");
            }
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                i = start;
                throw err("dimension " + t + " overflows");
            }
        }

        Header dtype(String descr, boolean fortran, long[] shape) {
            String bad = "unsupported dtype '" + descr + "' (supported: f4 f8 f2, b1, i8 i4 i2 i1, u8 u4 u2 u1)";
            if (descr.length() < 3) throw IoUtil.bad(name, bad);
            char bo = descr.charAt(0);
            String t = descr.substring(1);
            Num num =
                    switch (t) {
                        case "f4" -> Num.F32;
                        case "f8" -> Num.F64;
                        case "f2" -> Num.F16;
                        case "b1" -> Num.BOOL;
                        case "i8" -> Num.I64;
                        case "i4" -> Num.I32;
                        case "i2" -> Num.I16;
                        case "i1" -> Num.I8;
                        case "u8" -> Num.U64;
                        case "u4" -> Num.U32;
                        case "u2" -> Num.U16;
                        case "u1" -> Num.U8;
                        default -> throw IoUtil.bad(name, bad);
                    };
            ByteOrder order =
                    switch (bo) {
                        case '<' -> ByteOrder.LITTLE_ENDIAN;
                        case '>' -> ByteOrder.BIG_ENDIAN;
                        case '=' -> ByteOrder.nativeOrder();
                        case '|' -> {
                            if (num.size != 1) throw IoUtil.bad(name, bad + ": '|' needs a one-byte type");
                            yield ByteOrder.LITTLE_ENDIAN;
                        }
                        default -> throw IoUtil.bad(name, bad);
                    };
            return new Header(num, order, fortran, shape);
        }
    }

    // ------------------------------------------------------------ writing

    /** Writes {@code t} as a float32 {@code .npy} file, atomically. */
    public static void write(Path path, Tensor t) {
        AtomicFiles.write(path, out -> write(out, t));
    }

    /** The {@code .npy} bytes of {@code t} (float32, C order). */
    public static byte[] toBytes(Tensor t) {
        ByteArrayOutputStream bos = new ByteArrayOutputStream(128 + t.size() * 4);
        try {
            write(bos, t);
        } catch (IOException e) {
            throw new AttnException(AttnException.Code.INTERNAL, "in-memory write failed", e);
        }
        return bos.toByteArray();
    }

    /** Writes the {@code .npy} bytes of {@code t} to {@code out} (not closed). */
    public static void write(OutputStream out, Tensor t) throws IOException {
        out.write(header(t));
        float[] d = t.data();
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int off = 0; off < d.length; ) {
            int k = Math.min(d.length - off, buf.capacity() / 4);
            buf.clear();
            buf.asFloatBuffer().put(d, off, k);
            out.write(buf.array(), 0, k * 4);
            off += k;
        }
    }

    static byte[] header(Tensor t) {
        int[] dims = t.shape().dims();
        long[] ld = new long[dims.length];
        for (int k = 0; k < dims.length; k++) ld[k] = dims[k];
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + IoUtil.tuple(ld) + ", }";
        int major = 1;
        int prefix = 10;
        int total = prefix + dict.length() + 1;
        int padded = (total + 63) / 64 * 64;
        if (padded - prefix > 0xffff) {
            major = 2;
            prefix = 12;
            padded = (prefix + dict.length() + 1 + 63) / 64 * 64;
        }
        int hlen = padded - prefix;
        ByteBuffer b = ByteBuffer.allocate(padded).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).put((byte) major).put((byte) 0);
        if (major == 1) b.putShort((short) hlen);
        else b.putInt(hlen);
        b.put(dict.getBytes(StandardCharsets.ISO_8859_1));
        while (b.position() < padded - 1) b.put((byte) ' ');
        b.put((byte) '\n');
        return b.array();
    }
}
