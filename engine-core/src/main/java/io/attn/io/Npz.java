package io.attn.io;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CheckedOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * NumPy {@code .npz} archives: a zip of {@code .npy} entries, stored or deflated ({@code np.savez} /
 * {@code np.savez_compressed}). Entry {@code x.npy} becomes key {@code x}; the map keeps the archive's order.
 *
 * <p>Zip-bomb guard: an entry may inflate to at most {@link #MAX_RATIO} times its compressed size (deflate cannot do
 * better than about 1032:1), and beyond {@link #LARGE_ENTRY_BYTES} to at most {@link #MAX_LARGE_RATIO} times (real
 * arrays that big do not compress 100:1; a bomb does), and never more than {@link #MAX_ENTRY_BYTES}. The entry's
 * {@code .npy} header is read first: a claimed size over those limits, or a tensor larger than the JVM heap, is refused
 * at once, without inflating anything. Then the entry is inflated without keeping anything, counting its bytes against
 * the same limit; only then is it read, and the {@code .npy} reader checks its header against that exact count before
 * allocating. Entries that are not {@code .npy} files are refused.
 */
public final class Npz {
    /** Highest inflated/compressed size ratio accepted per entry. */
    public static final long MAX_RATIO = 1100;

    /** Entries inflating beyond this size must compress no better than {@link #MAX_LARGE_RATIO}. */
    public static final long LARGE_ENTRY_BYTES = 64L << 20;

    /** Highest inflated/compressed ratio accepted for the part of an entry beyond {@link #LARGE_ENTRY_BYTES}. */
    public static final long MAX_LARGE_RATIO = 100;

    /** Largest inflated entry accepted (an int-indexed float64 array plus a header). */
    public static final long MAX_ENTRY_BYTES = 8L * Integer.MAX_VALUE + Npy.MAX_HEADER_BYTES + 12;

    private Npz() {}

    /** Reads every array in the archive, in archive order. */
    public static Map<String, Tensor> read(Path path) {
        return read(path, MAX_ENTRY_BYTES);
    }

    /** Reads every array in the archive, in archive order, with the dtype each is stored in. */
    public static Map<String, Npy.Typed> readTyped(Path path) {
        return readTyped(path, MAX_ENTRY_BYTES);
    }

    /**
     * Reads every array in the archive, in archive order, refusing any entry that inflates to more than
     * {@code maxEntryBytes} (a service can set this well below the default).
     */
    public static Map<String, Tensor> read(Path path, long maxEntryBytes) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        readTyped(path, maxEntryBytes).forEach((k, v) -> out.put(k, v.tensor()));
        return out;
    }

    private static Map<String, Npy.Typed> readTyped(Path path, long maxEntryBytes) {
        IoUtil.refuseSpecialFile(path);
        String name = path.toString();
        long fileLen;
        try {
            fileLen = Files.size(path);
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
        Map<String, Npy.Typed> out = new LinkedHashMap<>();
        try (ZipFile zf = new ZipFile(path.toFile())) {
            Enumeration<? extends ZipEntry> en = zf.entries();
            while (en.hasMoreElements()) {
                ZipEntry e = en.nextElement();
                String entry = e.getName();
                String label = name + "[" + entry + "]";
                if (e.isDirectory()) throw IoUtil.bad(name, "unexpected directory entry '" + entry + "'");
                if (!entry.endsWith(".npy")) throw IoUtil.bad(name, "entry '" + entry + "' is not an .npy array");
                String key = entry.substring(0, entry.length() - 4);
                if (out.containsKey(key)) throw IoUtil.bad(name, "duplicate entry '" + entry + "'");
                long csize = e.getCompressedSize();
                if (csize < 0 || csize > fileLen) csize = fileLen;
                long c = Math.max(csize, 1);
                long limit = Math.min(
                        maxEntryBytes, Math.max(Math.min(c * MAX_RATIO, LARGE_ENTRY_BYTES), c * MAX_LARGE_RATIO));
                long[] claimed;
                try (InputStream in = zf.getInputStream(e)) {
                    claimed = Npy.peekClaimedBytes(in);
                }
                if (claimed != null && claimed[0] > limit) throw bomb(label, "claims", claimed[0], csize, limit);
                long heap = Runtime.getRuntime().maxMemory();
                if (claimed != null && heap != Long.MAX_VALUE && claimed[1] > heap)
                    throw IoUtil.bad(
                            label,
                            "array needs " + IoUtil.bytes(claimed[1]) + " as float32 but the JVM heap is only "
                                    + IoUtil.bytes(heap) + " (raise -Xmx)");
                long length;
                try (InputStream in = zf.getInputStream(e)) {
                    length = count(in, limit);
                }
                if (length > limit) throw bomb(label, "inflates to more than", limit, csize, limit);
                try (InputStream in = zf.getInputStream(e)) {
                    out.put(key, Npy.readTyped(in, length, label));
                }
            }
        } catch (IOException e) {
            throw IoUtil.io(name, "read zip archive", e);
        } catch (AttnException e) {
            throw e;
        } catch (RuntimeException e) { // java.util.zip reports some corruption as unchecked exceptions
            throw new AttnException(
                    AttnException.Code.BAD_INPUT,
                    name + ": corrupt zip archive: " + IoUtil.oneLine(String.valueOf(e.getMessage())),
                    e);
        }
        return out;
    }

    private static AttnException bomb(String label, String verb, long size, long csize, long limit) {
        return IoUtil.bad(
                label,
                verb + " " + IoUtil.bytes(size) + " from " + IoUtil.bytes(csize) + " compressed (limit here: "
                        + IoUtil.bytes(limit) + "; " + MAX_RATIO + "x the compressed size, " + MAX_LARGE_RATIO
                        + "x beyond " + IoUtil.bytes(LARGE_ENTRY_BYTES) + "); refusing a possible zip bomb");
    }

    /** Counts the stream's bytes, stopping once more than {@code limit} have been seen. */
    private static long count(InputStream in, long limit) throws IOException {
        byte[] buf = new byte[1 << 16];
        long n = 0;
        int k;
        while ((k = in.read(buf)) >= 0) {
            n += k;
            if (n > limit) return n;
        }
        return n;
    }

    /**
     * Writes the arrays as {@code key.npy} entries, in map order, atomically; deflated when {@code compress}, else
     * stored (like {@code np.savez}).
     */
    public static void write(Path path, Map<String, Tensor> arrays, boolean compress) {
        for (String k : arrays.keySet())
            if (k == null || k.isEmpty()) throw IoUtil.bad(path.toString(), "array names must not be empty");
        AtomicFiles.write(path, out -> write(out, arrays, compress));
    }

    /** Writes the archive to {@code out} (finished but not closed). */
    public static void write(OutputStream out, Map<String, Tensor> arrays, boolean compress) throws IOException {
        ZipOutputStream zos = new ZipOutputStream(out);
        for (Map.Entry<String, Tensor> a : arrays.entrySet()) {
            ZipEntry e = new ZipEntry(a.getKey() + ".npy");
            if (compress) e.setMethod(ZipEntry.DEFLATED);
            else {
                // stored entries need size and CRC up front: compute them in a first pass that keeps nothing
                CountingCrc c = new CountingCrc();
                Npy.write(c, a.getValue());
                e.setMethod(ZipEntry.STORED);
                e.setSize(c.count);
                e.setCompressedSize(c.count);
                e.setCrc(c.getChecksum().getValue());
            }
            zos.putNextEntry(e);
            Npy.write(zos, a.getValue());
            zos.closeEntry();
        }
        zos.finish();
    }

    private static final class CountingCrc extends CheckedOutputStream {
        long count;

        CountingCrc() {
            super(OutputStream.nullOutputStream(), new CRC32());
        }

        @Override
        public void write(int b) throws IOException {
            super.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            super.write(b, off, len);
            count += len;
        }
    }
}
