package io.attn.cpu.ops;

import io.attn.cpu.CpuInfo;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The GEMM's blocking for this CPU: the K step, the rows of A and columns of B packed at once, and whether the tile
 * packs A. Taken, in this order, from this CPU's tuning cache (written by {@code attn tune}, {@link TuneCache}), else
 * from a table of the CPUs it was measured on, keyed by {@code /proc/cpuinfo}'s family and model and the JVM's vector
 * width (an entry measured with 512-bit vectors does not apply under {@code -XX:UseAVX=2}), else the defaults
 * (measured on Zen 5, and on Zen 1 for the 16-register set). {@code -Dattn.cpu.tune=cache} (the default) reads the
 * cache, {@code auto} also tunes on first use when there is none ({@link Tuner}, about 30 s once per CPU, then
 * cached), {@code off} never reads it. Each value can be forced: {@code -Dattn.cpu.gemm.kc}, {@code .mc}, {@code .nc},
 * {@code .pack4}, {@code .pack6}; {@code -Dattn.cpu.tuning=off} ignores the cache and the table and {@code
 * -Dattn.cpu.tuning=6/207} takes that entry on any host (CI runs the tests so, to cover the blocking of CPUs it does not
 * run on). {@code attn probe} prints the choice ({@link #describe}). Every choice computes the same products within the
 * same bounds; only the K step changes the order in which a product's partial sums are added.
 *
 * <p>With the blocking comes the width of causal attention's key tiles ({@link #causalKeyTile}: 32 or 64 keys with
 * 256-bit vectors, only 64 with 512-bit ones; {@code -Dattn.cpu.attention.causal-tile} forces it), measured by the same
 * {@code attn tune}. It changes the order of the online softmax's steps, so results move within the same bounds
 * (as the K step's do).
 *
 * @param kc the longest K step
 * @param mcTiles rows of A per block, in tiles of the GEMM's rows
 * @param nc columns of B per block
 * @param packA whether the tile reads A packed (rows interleaved) rather than in place
 * @param causalTile keys per key tile of causal attention ({@link Attention#validKeyTile})
 * @param from {@code tuned}, {@code table}, {@code default} or {@code forced} (by {@code -Dattn.cpu.tuning}), for {@link
 *     #json}
 * @param source where the values come from, in words, for {@link #describe}
 */
public record Tuning(int kc, int mcTiles, int nc, boolean packA, int causalTile, String from, String source) {

    /**
     * The property that turns the table off ({@code off}), on ({@code table}, the default) or forces one of its entries
     * ({@code FAMILY/MODEL}, e.g. {@code 6/207}).
     */
    public static final String PROPERTY = "attn.cpu.tuning";

    /**
     * The property that says what to do with the tuning cache: {@code cache} (the default: use it where there is one),
     * {@code auto} (use it, or tune now and write it) or {@code off} (never read it).
     */
    public static final String TUNE = "attn.cpu.tune";

    /**
     * One measured CPU: family, model, the JVM vector width it was measured with, its values ({@code packA}: whether
     * the tile packs A), and where.
     */
    record Entry(
            int family,
            int model,
            int vectorBits,
            int kc,
            int mcTiles,
            int nc,
            boolean packA,
            int causalTile,
            String measured) {}

    /** The property that forces causal attention's key tile width ({@link #causalKeyTile}). */
    public static final String CAUSAL_TILE = "attn.cpu.attention.causal-tile";

    /**
     * Defaults: Zen 5 (AVX-512) measurements, docs/performance.md; Zen 1 (AVX2) measured no better with others. The
     * 4-row tile (16 registers) packs A, the 6-row one reads it in place ({@link Gemm}).
     */
    static final Tuning DEFAULT = new Tuning(2048, 16, 512, Registers.FEW, Attention.BC, "default", "defaults");

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
            Attention.BC,
            "Intel Xeon, Emerald Rapids: measured 2026-11-26, 1.3-1.75x the defaults"));

    /** This machine's choice (the cache's, the table's or the defaults, before any single property). */
    static Tuning host() {
        return Host.TUNING;
    }

    private static final class Host {
        static final Tuning TUNING = resolve(
                System.getProperty(PROPERTY, "table").trim(),
                System.getProperty(TUNE, "cache").trim(),
                CpuInfo.host(),
                TuneCache.dir(),
                line -> System.err.println("attn: " + line),
                () -> Tuner.tuneAndSave(Tuner.DEFAULT_SECONDS, line -> System.err.println("attn tune: " + line)));
    }

    /**
     * The choice for {@code cpu}: a mode of {@link #PROPERTY} other than {@code table} decides alone; else, unless
     * {@code tune} is {@code off}, the cache in {@code dir} where it has a valid file for this CPU (a bad or stale one
     * is ignored with one line to {@code warn}), else with {@code tune} {@code auto} what {@code tuner} measures now,
     * else the table or the defaults.
     */
    static Tuning resolve(
            String mode,
            String tune,
            CpuInfo cpu,
            java.nio.file.Path dir,
            Consumer<String> warn,
            Supplier<Tuning> tuner) {
        if (!tune.equals("cache") && !tune.equals("auto") && !tune.equals("off"))
            throw new IllegalArgumentException("-D" + TUNE + " must be cache, auto or off, not '" + tune + "'");
        if (!mode.equals("table") || tune.equals("off")) return choose(mode, cpu);
        Tuning cached = dir == null ? null : TuneCache.read(dir, cpu, Gemm.MR, warn);
        if (cached != null) return cached;
        if (tune.equals("auto")) return tuner.get();
        return choose(mode, cpu);
    }

    /**
     * The blocking in use: {@link #host()}'s, with any single property ({@code -Dattn.cpu.gemm.kc}, {@code .mc},
     * {@code .nc}, {@code .pack4}, {@code .pack6}) set over it.
     */
    static Gemm.Blocking blocking() {
        boolean pack4 = flag("attn.cpu.gemm.pack4", true), pack6 = flag("attn.cpu.gemm.pack6", false);
        Tuning t = host();
        int mr = Gemm.MR, nr = Gemm.NR;
        String packProperty = mr == 4 ? "attn.cpu.gemm.pack4" : "attn.cpu.gemm.pack6";
        boolean packA = System.getProperty(packProperty) != null ? (mr == 4 ? pack4 : pack6) : t.packA;
        return new Gemm.Blocking(
                Gemm.kc(System.getProperty("attn.cpu.gemm.kc", Integer.toString(t.kc))),
                blocks("attn.cpu.gemm.mc", t.mcTiles * mr, mr),
                blocks("attn.cpu.gemm.nc", Math.max(nr, (t.nc / nr) * nr), nr),
                packA);
    }

    /**
     * Causal attention's key tile width in use: {@code -Dattn.cpu.attention.causal-tile} where set, else {@link
     * #host()}'s (resolved once).
     */
    static int causalKeyTile() {
        return CausalTile.KEYS;
    }

    private static final class CausalTile {
        static final int KEYS = causalTile(System.getProperty(CAUSAL_TILE), host());
    }

    /** {@code property}'s width (checked: one line naming it and the widths allowed) where set, else {@code t}'s. */
    static int causalTile(String property, Tuning t) {
        if (property == null) return t.causalTile;
        int n;
        try {
            n = Integer.parseInt(property.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (!Attention.validKeyTile(n))
            throw new IllegalArgumentException("-D" + CAUSAL_TILE + " must be one of "
                    + java.util.Arrays.toString(Attention.keyTiles()) + " with this JVM's vectors, not '" + property
                    + "'");
        return n;
    }

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
                "default",
                String.format(
                        Locale.ROOT,
                        "defaults: no table entry for family %d model %d with %d-bit vectors",
                        cpu.family(),
                        cpu.model(),
                        cpu.vectorBits()));
    }

    private static Tuning of(Entry e, String from, String why) {
        return new Tuning(e.kc, e.mcTiles, e.nc, e.packA, e.causalTile, from, why + " (" + e.measured + ")");
    }

    private static Tuning defaults(String from, String why) {
        return new Tuning(DEFAULT.kc, DEFAULT.mcTiles, DEFAULT.nc, DEFAULT.packA, DEFAULT.causalTile, from, why);
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
        Gemm.Blocking b = Gemm.host();
        return gemmDescription(b) + "; causal attention: key tiles of " + causalKeyTile() + " keys"
                + forced(CAUSAL_TILE);
    }

    private static String gemmDescription(Gemm.Blocking b) {
        return String.format(
                        Locale.ROOT,
                        "GEMM blocks: K step %d%s, A %d rows%s, B %d columns%s, A %s (%s)",
                        b.kc(),
                        forced("attn.cpu.gemm.kc"),
                        b.mc(),
                        forced("attn.cpu.gemm.mc"),
                        b.nc(),
                        forced("attn.cpu.gemm.nc"),
                        b.packA() ? "packed, rows interleaved" : "read in place",
                        host().source)
                + (System.getProperty(Gemm.MR == 4 ? "attn.cpu.gemm.pack4" : "attn.cpu.gemm.pack6") != null
                        ? ", packing forced"
                        : "");
    }

    /**
     * The blocking in use as JSON, e.g. {@code {"kc":2048,"mc":64,"nc":512,"a":"packed","from":"default"}} ({@code
     * from}: {@code tuned} (the cache), {@code table}, {@code default} or {@code forced}, by {@code -Dattn.cpu.tuning}
     * or any single property).
     */
    public static String json() {
        boolean single = Stream.of("kc", "mc", "nc", "pack4", "pack6")
                .anyMatch(p -> System.getProperty("attn.cpu.gemm." + p) != null);
        String from = single ? "forced" : host().from;
        Gemm.Blocking b = Gemm.host();
        return String.format(
                Locale.ROOT,
                "{\"kc\":%d,\"mc\":%d,\"nc\":%d,\"a\":\"%s\",\"from\":\"%s\"}",
                b.kc(),
                b.mc(),
                b.nc(),
                b.packA() ? "packed" : "in place",
                from);
    }

    /**
     * Causal attention's key tile as JSON, e.g. {@code {"causal_key_tile":32,"from":"tuned"}} ({@code from} as in
     * {@link #json}; {@code forced} by {@code -Dattn.cpu.attention.causal-tile} too).
     */
    public static String attentionJson() {
        String from = System.getProperty(CAUSAL_TILE) != null ? "forced" : host().from;
        return String.format(Locale.ROOT, "{\"causal_key_tile\":%d,\"from\":\"%s\"}", causalKeyTile(), from);
    }

    private static String forced(String property) {
        return System.getProperty(property) != null ? " (forced)" : "";
    }
}
