package io.attn.cpu.ops;

import io.attn.cpu.CpuInfo;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The GEMM's blocking for this CPU: the K step, the rows of A and columns of B packed at once, and whether the 6-row
 * tile packs A. Chosen from a table of the CPUs it was measured on, keyed by {@code /proc/cpuinfo}'s family and model
 * and the JVM's vector width (an entry measured with 512-bit vectors does not apply under {@code -XX:UseAVX=2}); a CPU
 * without an entry gets the defaults (measured on Zen 5, and on Zen 1 for the 16-register set). Each value can be
 * forced: {@code -Dattn.cpu.gemm.kc}, {@code .mc}, {@code .nc}, {@code .pack6}; {@code -Dattn.cpu.tuning=off} ignores
 * the table and {@code -Dattn.cpu.tuning=6/207} takes that entry on any host (CI runs the tests so, to cover the
 * blocking of CPUs it does not run on). {@code attn probe} prints the choice ({@link #describe}). Every choice computes
 * the same products within the same bounds; only the K step changes the order in which a product's partial sums are
 * added.
 *
 * @param kc the longest K step
 * @param mcTiles rows of A per block, in tiles of the GEMM's rows
 * @param nc columns of B per block
 * @param pack6 whether the 6-row tile reads A packed (rows interleaved) rather than in place
 * @param from {@code table}, {@code defaults} or {@code forced} (by {@code -Dattn.cpu.tuning}), for {@link #json}
 * @param source where the values come from, in words, for {@link #describe}
 */
public record Tuning(int kc, int mcTiles, int nc, boolean pack6, String from, String source) {

    /**
     * The property that turns the table off ({@code off}), on ({@code table}, the default) or forces one of its entries
     * ({@code FAMILY/MODEL}, e.g. {@code 6/207}).
     */
    public static final String PROPERTY = "attn.cpu.tuning";

    /** One measured CPU: family, model, the JVM vector width it was measured with, its values, and where. */
    record Entry(int family, int model, int vectorBits, int kc, int mcTiles, int nc, boolean pack6, String measured) {}

    /** Defaults: Zen 5 (AVX-512) measurements, docs/performance.md; Zen 1 (AVX2) measured no better with others. */
    static final Tuning DEFAULT = new Tuning(2048, 16, 512, false, "defaults", "defaults");

    /**
     * The measured CPUs (docs/performance.md, "Per-CPU GEMM blocking"). Intel Xeon family 6 model 207 (Emerald Rapids:
     * 48 KiB L1d, 2 MiB L2; the GPU host, a KVM guest), 1 thread, thread CPU time, 6 samples per setting: with A read
     * in place (the 6 rows 4 KB apart at K = 1024) the products ran at 0.52-0.54x OpenBLAS; packing A interleaved took
     * them to 0.67-0.78x, and with it a K step of 256 (a B micro-panel of 32 KB, in L1), 192-row A blocks and 1024-column
     * B blocks to 0.80-0.91x (1024^3 26.4 -> 17.0 ms, 512 x 1536 x 384 7.9 -> 4.5, 2048 x 384 x 1536 30.7 -> 20.2).
     */
    static final List<Entry> TABLE = List.of(new Entry(
            6,
            207,
            512,
            256,
            32,
            1024,
            true,
            "Intel Xeon, Emerald Rapids: measured 2026-11-26, 1.3-1.75x the defaults"));

    /** This machine's choice (the table's, before any property). */
    static final Tuning HOST = choose(System.getProperty(PROPERTY, "table").trim(), CpuInfo.host());

    static Tuning choose(String mode, CpuInfo cpu) {
        if (mode.equals("off")) return defaults("forced", "defaults (-D" + PROPERTY + "=off)");
        if (!mode.equals("table")) {
            StringBuilder known = new StringBuilder();
            for (Entry e : TABLE) {
                if (mode.equals(e.family + "/" + e.model))
                    return of(e, "forced", "forced by -D" + PROPERTY + "=" + mode);
                known.append(", ").append(e.family).append('/').append(e.model);
            }
            throw new IllegalArgumentException("-D" + PROPERTY + " must be table, off or a table entry ("
                    + known.substring(2) + "), not '" + mode + "'");
        }
        for (Entry e : TABLE)
            if (e.family == cpu.family() && e.model == cpu.model() && e.vectorBits == cpu.vectorBits())
                return of(
                        e,
                        "table",
                        "table entry for family " + e.family + " model " + e.model + ", " + e.vectorBits
                                + "-bit vectors");
        return defaults(
                "defaults",
                String.format(
                        Locale.ROOT,
                        "defaults: no table entry for family %d model %d with %d-bit vectors",
                        cpu.family(),
                        cpu.model(),
                        cpu.vectorBits()));
    }

    private static Tuning of(Entry e, String from, String why) {
        return new Tuning(e.kc, e.mcTiles, e.nc, e.pack6, from, why + " (" + e.measured + ")");
    }

    private static Tuning defaults(String from, String why) {
        return new Tuning(DEFAULT.kc, DEFAULT.mcTiles, DEFAULT.nc, DEFAULT.pack6, from, why);
    }

    /** A boolean property ({@code true} or {@code false}), else {@code fallback}; any other value: one line. */
    static boolean flag(String property, boolean fallback) {
        String v = System.getProperty(property);
        if (v == null) return fallback;
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("-D" + property + " must be true or false, not '" + v + "'");
        };
    }

    /**
     * The largest block a property may set: the packing buffers are {@code MC x KC} and {@code KC x NC} floats per
     * thread (4096 x 2048: 32 MB), so a mistyped value cannot ask for gigabytes.
     */
    static final int MAX_BLOCK = 4096;

    /**
     * A block size from {@code property} (an integer of at least {@code multiple}, rounded up to a multiple of it), else
     * {@code fallback}; any other value: one line.
     */
    static int blocks(String property, int fallback, int multiple) {
        String v = System.getProperty(property);
        if (v == null) return fallback;
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < multiple || n > MAX_BLOCK)
            throw new IllegalArgumentException("-D" + property + " must be an integer from " + multiple + " to "
                    + MAX_BLOCK + ", not '" + v + "'");
        return (n + multiple - 1) / multiple * multiple;
    }

    /**
     * The GEMM blocking in use and why, e.g. {@code GEMM blocks: K step 2048, A 96 rows, B 512 columns, A in place
     * (defaults: no table entry for family 23 model 1 with 256-bit vectors)}; values set by a property are marked.
     */
    public static String describe() {
        return String.format(
                        Locale.ROOT,
                        "GEMM blocks: K step %d%s, A %d rows%s, B %d columns%s, A %s (%s)",
                        Gemm.KC,
                        forced("attn.cpu.gemm.kc"),
                        Gemm.MC,
                        forced("attn.cpu.gemm.mc"),
                        Gemm.NC,
                        forced("attn.cpu.gemm.nc"),
                        Gemm.PACKI ? "packed, rows interleaved" : "read in place",
                        HOST.source)
                + (System.getProperty(Gemm.MR == 4 ? "attn.cpu.gemm.pack4" : "attn.cpu.gemm.pack6") != null
                        ? ", packing forced"
                        : "");
    }

    /**
     * The blocking in use as JSON, e.g. {@code {"kc":2048,"mc":64,"nc":512,"a":"packed","from":"defaults"}} ({@code
     * from}: {@code table}, {@code defaults} or {@code forced}, by {@code -Dattn.cpu.tuning} or any single property).
     */
    public static String json() {
        boolean single = Stream.of("kc", "mc", "nc", "pack4", "pack6")
                .anyMatch(p -> System.getProperty("attn.cpu.gemm." + p) != null);
        String from = single ? "forced" : HOST.from;
        return String.format(
                Locale.ROOT,
                "{\"kc\":%d,\"mc\":%d,\"nc\":%d,\"a\":\"%s\",\"from\":\"%s\"}",
                Gemm.KC,
                Gemm.MC,
                Gemm.NC,
                Gemm.PACKI ? "packed" : "in place",
                from);
    }

    private static String forced(String property) {
        return System.getProperty(property) != null ? " (forced)" : "";
    }
}
