package io.attn.cpu.ops;

import io.attn.cpu.CpuInfo;
import io.attn.io.Json;
import io.attn.io.JsonFields;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The tuning cache: what {@code attn tune} ({@link Tuner}) measured on a CPU, one small JSON file per CPU in the user's
 * cache directory ({@link #dir}), named by its key ({@link #file}): family, model, the JVM's vector width, the cores,
 * and the tile set (16 or 32 registers) the blocking was measured with. A file is used only when all of them and its
 * {@link #VERSION} match this JVM and its values are a blocking the GEMM supports ({@link Gemm.Blocking}); a bad or
 * stale file (unreadable, bad JSON, another CPU's key, another version, values out of range) is ignored with one line
 * naming the file and why, and the table or the defaults apply.
 *
 * <pre>{"version":2,"family":25,"model":1,"vector_bits":256,"cores":2,"tiles":16,"kc":256,"mc":64,"nc":1024,
 *  "a":"packed","causal_tile":32,"measured":"2026-11-27T17:30:00Z, ...","cpu":"AMD EPYC"}</pre>
 *
 * <p>Version 1 (before causal attention's key tile was measured) is still read, with the default tile.
 */
final class TuneCache {
    private TuneCache() {}

    /** The file format's version: a file of another version is ignored (and rewritten by the next {@code attn tune}). */
    static final int VERSION = 2;

    /** The property that names the cache directory instead of {@code $XDG_CACHE_HOME/attn} or {@code ~/.cache/attn}. */
    static final String DIR = "attn.cpu.tune.dir";

    /**
     * The cache directory: {@code -Dattn.cpu.tune.dir}, else {@code $XDG_CACHE_HOME/attn} (an absolute path, as the XDG
     * specification requires), else {@code ~/.cache/attn}; null where none can be named.
     */
    static Path dir() {
        String forced = System.getProperty(DIR);
        if (forced != null && !forced.isBlank()) return Path.of(forced.trim());
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) return Path.of(xdg, "attn");
        String home = System.getProperty("user.home");
        return home == null || home.isBlank() ? null : Path.of(home, ".cache", "attn");
    }

    /** The file for {@code cpu} in {@code dir}, e.g. {@code cpu-tuning-25-1-256bit-2cores.json}. */
    static Path file(Path dir, CpuInfo cpu) {
        return dir.resolve(String.format(
                Locale.ROOT,
                "cpu-tuning-%d-%d-%dbit-%dcores.json",
                cpu.family(),
                cpu.model(),
                cpu.vectorBits(),
                cpu.cores()));
    }

    /** The key in words: {@code family 25 model 1, 256-bit vectors, 2 cores, 16-register tiles}. */
    static String key(int family, int model, int vectorBits, int cores, int tiles) {
        return String.format(
                Locale.ROOT,
                "family %d model %d, %d-bit vectors, %d cores, %d-register tiles",
                family,
                model,
                vectorBits,
                cores,
                tiles);
    }

    /**
     * This CPU's tuning from {@code dir}, with {@code mr}-row tiles: null where there is no file (silently) or where
     * the file is bad or stale (with one line to {@code warn}).
     */
    static Tuning read(Path dir, CpuInfo cpu, int mr, Consumer<String> warn) {
        Path f = file(dir, cpu);
        if (!Files.exists(f)) return null;
        try {
            JsonFields j = JsonFields.read(f);
            int version = j.integer("version", -1);
            if (version != VERSION && version != 1)
                return ignored(warn, f, "version " + version + ", this attn reads versions 1 and " + VERSION);
            int tiles = mr == 4 ? 16 : 32;
            String theirs = key(
                    j.integer("family", -1),
                    j.integer("model", -1),
                    j.integer("vector_bits", -1),
                    j.integer("cores", -1),
                    j.integer("tiles", -1));
            String ours = key(cpu.family(), cpu.model(), cpu.vectorBits(), cpu.cores(), tiles);
            if (!theirs.equals(ours)) return ignored(warn, f, "measured on " + theirs + ", this is " + ours);
            String a = j.string("a", "?");
            if (!a.equals("packed") && !a.equals("in place"))
                return ignored(warn, f, "\"a\" must be \"packed\" or \"in place\", not \"" + a + "\"");
            Gemm.Blocking b = new Gemm.Blocking(
                    j.integer("kc", -1), j.integer("mc", -1), j.integer("nc", -1), a.equals("packed"));
            int tile = version == 1 ? Attention.BC : j.integer("causal_tile", -1);
            if (!Attention.validKeyTile(tile))
                return ignored(
                        warn,
                        f,
                        "\"causal_tile\" must be one of " + java.util.Arrays.toString(Attention.keyTiles()) + ", not "
                                + tile);
            return new Tuning(
                    b.kc(),
                    b.mc() / mr,
                    b.nc(),
                    b.packA(),
                    tile,
                    "tuned",
                    "tuned by attn tune, " + j.string("measured", "?") + " (" + f + ")");
        } catch (RuntimeException e) { // bad JSON (AttnException names file, line, column), a field's type, a range
            String m = e.getMessage() == null ? e.toString() : e.getMessage();
            return ignored(warn, f, m.replace(f.toString() + ": ", "").replace(f + " ", ""));
        }
    }

    private static Tuning ignored(Consumer<String> warn, Path f, String why) {
        warn.accept("ignoring the CPU tuning cache " + f + ": " + why);
        return null;
    }

    /** The file's text for {@code b} measured on {@code cpu} with {@code mr}-row tiles. */
    static String json(CpuInfo cpu, int mr, Gemm.Blocking b, int causalTile, String measured) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", VERSION);
        m.put("family", cpu.family());
        m.put("model", cpu.model());
        m.put("vector_bits", cpu.vectorBits());
        m.put("cores", cpu.cores());
        m.put("tiles", mr == 4 ? 16 : 32);
        m.put("kc", b.kc());
        m.put("mc", b.mc());
        m.put("nc", b.nc());
        m.put("a", b.packA() ? "packed" : "in place");
        m.put("causal_tile", causalTile);
        m.put("measured", measured);
        m.put("cpu", cpu.name());
        return Json.write(m) + "\n";
    }

    /** Writes {@code b} for {@code cpu} into {@code dir} (created if missing; the file replaced whole); its path. */
    static Path write(Path dir, CpuInfo cpu, int mr, Gemm.Blocking b, int causalTile, String measured)
            throws IOException {
        Files.createDirectories(dir);
        Path f = file(dir, cpu), tmp = Files.createTempFile(dir, ".cpu-tuning", ".tmp");
        try {
            Files.writeString(tmp, json(cpu, mr, b, causalTile, measured));
            Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return f;
    }
}
