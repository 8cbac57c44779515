package io.attn.io;

import io.attn.AttnException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/** Shared helpers: human-readable sizes, error wrapping and checked allocation. */
final class IoUtil {
    /** Most elements one host tensor may hold (see {@link io.attn.tensor.Shape}). */
    static final long MAX_ELEMENTS = Integer.MAX_VALUE - 16;

    private IoUtil() {}

    /** "64 bytes", "4 KB", "1.5 GB", "4 TB" (decimal units, three significant digits). */
    static String bytes(long n) {
        if (n < 1000) return n + (n == 1 ? " byte" : " bytes");
        String[] units = {"KB", "MB", "GB", "TB", "PB", "EB"};
        double v = n;
        int u = -1;
        while (v >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        String s = String.format(Locale.ROOT, "%.3g", v);
        if (s.contains(".")) s = s.replaceAll("0+$", "").replaceAll("\\.$", "");
        return s + " " + units[u];
    }

    static AttnException bad(String source, String problem) {
        return AttnException.badInput(source + ": " + problem);
    }

    /** Wraps an I/O failure as a one-line BAD_INPUT message naming the file. */
    static AttnException io(String source, String verb, IOException e) {
        String why;
        if (e instanceof NoSuchFileException) why = "file not found";
        else if (e instanceof AccessDeniedException) why = "permission denied";
        else if (e instanceof EOFException) why = "truncated (unexpected end of file)";
        else why = e.getMessage() == null ? e.getClass().getSimpleName() : oneLine(e.getMessage());
        return new AttnException(AttnException.Code.BAD_INPUT, source + ": cannot " + verb + ": " + why, e);
    }

    static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    /** Python-like tuple text for a shape: {@code ()}, {@code (3,)}, {@code (2, 3)}. */
    static String tuple(long[] dims) {
        if (dims.length == 1) return "(" + dims[0] + ",)";
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < dims.length; i++) sb.append(i > 0 ? ", " : "").append(dims[i]);
        return sb.append(')').toString();
    }

    /** Product of dims, or -1 when it overflows a long. Dims must already be non-negative. */
    static long numel(long[] dims) {
        long p = 1;
        for (long d : dims) if (d == 0) return 0;
        for (long d : dims) {
            try {
                p = Math.multiplyExact(p, d);
            } catch (ArithmeticException e) {
                return -1;
            }
        }
        return p;
    }

    /**
     * Allocates the float array for a tensor whose element count has already been checked against the file. Refuses
     * cleanly when it exceeds the per-tensor limit or the JVM heap, so a user gets a message instead of an
     * OutOfMemoryError.
     */
    static float[] floats(long n, String source, String what) {
        if (n > MAX_ELEMENTS)
            throw bad(source, what + " has " + n + " elements; one tensor holds at most " + MAX_ELEMENTS);
        long need = n * 4;
        long heap = Runtime.getRuntime().maxMemory();
        if (heap != Long.MAX_VALUE && need > heap)
            throw bad(
                    source,
                    what + " needs " + bytes(need) + " as float32 but the JVM heap is only " + bytes(heap)
                            + " (raise -Xmx)");
        return new float[(int) n];
    }

    /**
     * {@code cap}, lowered to a 128th of the JVM's maximum heap: parsing JSON text takes about ten times its size in
     * objects, so a header near the format's cap would exhaust a small heap (-Xmx256m allows 2 MB of header, about
     * 25 000 tensors; a 4 GiB heap 32 MB; real models need well under 1 MB).
     */
    static long heapCap(long cap) {
        long heap = Runtime.getRuntime().maxMemory();
        return heap == Long.MAX_VALUE ? cap : Math.min(cap, heap / 128);
    }

    /**
     * Refuses a path that exists but is neither a regular file nor a directory (a named pipe, a socket, a device such
     * as /dev/zero): opening a pipe blocks until a writer comes, and a device can be endless. Missing files and
     * directories are left to the caller's open, which reports them.
     */
    static void refuseSpecialFile(java.nio.file.Path p) {
        if (java.nio.file.Files.exists(p)
                && !java.nio.file.Files.isRegularFile(p)
                && !java.nio.file.Files.isDirectory(p))
            throw bad(p.toString(), "not a regular file (a pipe, socket or device): give a file");
    }

    static int[] toIntDims(long[] dims, String source) {
        int[] d = new int[dims.length];
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] > Integer.MAX_VALUE)
                throw bad(source, "dimension " + dims[i] + " in shape " + tuple(dims) + " is too large");
            d[i] = (int) dims[i];
        }
        return d;
    }
}
