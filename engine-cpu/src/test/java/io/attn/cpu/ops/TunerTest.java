package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cpu.CpuInfo;
import io.attn.cpu.Parallel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn tune}: the cache (round trip, keys, bad and stale files ignored with one line), the order in which the
 * blocking is taken (cache, table, defaults; {@code -Dattn.cpu.tune=off}, {@code auto}), the search on a tiny budget,
 * and every blocking the search may choose computing exact products (judged by a double-precision product).
 */
class TunerTest {
    @TempDir
    Path dir;

    private static CpuInfo cpu(int family, int model, int bits, int cores) {
        return new CpuInfo("test cpu", family, model, true, bits == 512, bits, cores);
    }

    /** This JVM's vector width (the blocking's multiples follow it) on a made-up CPU. */
    private static CpuInfo here(int family, int model, int cores) {
        return cpu(family, model, jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize(), cores);
    }

    private static final Gemm.Blocking SOME = new Gemm.Blocking(384, 12 * Gemm.MR, 1024, true);

    /** The narrowest key tile this JVM's vectors allow (32 keys with 256-bit vectors; the default 64 with 512). */
    private static final int TILE = Attention.keyTiles()[0];

    @Test
    void theCacheRoundTripsPerCpu() throws Exception {
        CpuInfo c = here(25, 1, 2);
        Path f = TuneCache.write(dir, c, Gemm.MR, SOME, TILE, "2026-11-27T17:00:00Z, test");
        assertEquals(TuneCache.file(dir, c), f);
        List<String> warned = new ArrayList<>();
        Tuning t = TuneCache.read(dir, c, Gemm.MR, warned::add);
        assertEquals(List.of(), warned);
        assertEquals(384, t.kc());
        assertEquals(12, t.mcTiles());
        assertEquals(1024, t.nc());
        assertTrue(t.packA());
        assertEquals(TILE, t.causalTile());
        assertEquals("tuned", t.from());
        assertTrue(t.source().startsWith("tuned by attn tune, 2026-11-27T17:00:00Z, test (" + f), t.source());
        // rewritten whole, no temporary file left
        TuneCache.write(dir, c, Gemm.MR, new Gemm.Blocking(256, 4 * Gemm.MR, 512, false), TILE, "again");
        assertEquals(256, TuneCache.read(dir, c, Gemm.MR, warned::add).kc());
        try (var files = Files.list(dir)) {
            assertEquals(
                    List.of(f.getFileName().toString()),
                    files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void eachCpuKeyHasItsOwnFileAndNoFileIsSilent() {
        List<Path> files = List.of(
                TuneCache.file(dir, cpu(25, 1, 256, 2)),
                TuneCache.file(dir, cpu(25, 2, 256, 2)),
                TuneCache.file(dir, cpu(26, 1, 256, 2)),
                TuneCache.file(dir, cpu(25, 1, 512, 2)),
                TuneCache.file(dir, cpu(25, 1, 256, 4)));
        assertEquals(files.size(), files.stream().distinct().count(), files.toString());
        assertEquals(
                "cpu-tuning-25-1-256bit-2cores.json", files.get(0).getFileName().toString());
        List<String> warned = new ArrayList<>();
        assertNull(TuneCache.read(dir, here(25, 1, 2), Gemm.MR, warned::add));
        assertEquals(List.of(), warned);
    }

    @Test
    void badOrStaleFilesAreIgnoredWithOneLineNamingTheFile() throws Exception {
        CpuInfo c = here(25, 1, 2);
        String good = TuneCache.json(c, Gemm.MR, SOME, TILE, "test");
        int tiles = Gemm.MR == 4 ? 16 : 32;
        Map<String, String> bad = new HashMap<>();
        bad.put("not JSON", "{\"version\":2,");
        bad.put("an array", "[1,2]");
        bad.put("another version", good.replace("\"version\":2", "\"version\":3"));
        bad.put("no version", good.replace("\"version\":2,", ""));
        bad.put("another model", good.replace("\"model\":1,", "\"model\":17,"));
        bad.put("other cores", good.replace("\"cores\":2,", "\"cores\":8,"));
        bad.put("other tiles", good.replace("\"tiles\":" + tiles, "\"tiles\":" + (48 - tiles)));
        bad.put("a K step too short", good.replace("\"kc\":384", "\"kc\":8"));
        bad.put("rows not whole tiles", good.replace("\"mc\":" + 12 * Gemm.MR, "\"mc\":" + (12 * Gemm.MR + 1)));
        bad.put("huge columns", good.replace("\"nc\":1024", "\"nc\":1048576"));
        bad.put("a string for a number", good.replace("\"kc\":384", "\"kc\":\"384\""));
        bad.put("an unknown packing", good.replace("\"a\":\"packed\"", "\"a\":\"sideways\""));
        bad.put(
                "a key tile of no whole vectors",
                good.replace("\"causal_tile\":" + TILE, "\"causal_tile\":" + (TILE + 1)));
        bad.put("a key tile too wide", good.replace("\"causal_tile\":" + TILE, "\"causal_tile\":" + 2 * Attention.BC));
        bad.put("no key tile", good.replace("\"causal_tile\":" + TILE + ",", ""));
        assertEquals(15, bad.size());
        for (var e : bad.entrySet()) {
            assertNotEquals(good, e.getValue(), e.getKey());
            Files.writeString(TuneCache.file(dir, c), e.getValue());
            List<String> warned = new ArrayList<>();
            assertNull(TuneCache.read(dir, c, Gemm.MR, warned::add), e.getKey());
            assertEquals(1, warned.size(), e.getKey() + ": " + warned);
            String line = warned.get(0);
            assertTrue(line.startsWith("ignoring the CPU tuning cache " + TuneCache.file(dir, c) + ": "), line);
            assertTrue(!line.contains("\n") && !line.contains("Exception"), e.getKey() + ": " + line);
        }
        Files.writeString(TuneCache.file(dir, c), good);
        assertEquals(384, TuneCache.read(dir, c, Gemm.MR, s -> {}).kc());
        // a version 1 file (before the key tile was measured): read, with the default tile
        Files.writeString(
                TuneCache.file(dir, c),
                good.replace("\"version\":2", "\"version\":1").replace("\"causal_tile\":" + TILE + ",", ""));
        List<String> warned = new ArrayList<>();
        Tuning v1 = TuneCache.read(dir, c, Gemm.MR, warned::add);
        assertEquals(List.of(), warned);
        assertEquals(384, v1.kc());
        assertEquals(Attention.BC, v1.causalTile());
    }

    @Test
    void theCacheComesBeforeTheTableAndTheTableBeforeTheDefaults() throws Exception {
        CpuInfo xeon = cpu(6, 207, 512, 2), zen3 = here(25, 1, 2);
        AtomicInteger tuned = new AtomicInteger();
        java.util.function.Supplier<Tuning> tuner = () -> {
            tuned.incrementAndGet();
            return new Tuning(512, 8, 256, false, Attention.BC, "tuned", "tuned now");
        };
        List<String> warned = new ArrayList<>();
        // no cache: the table, else the defaults
        assertEquals(
                "table",
                Tuning.resolve("table", "cache", xeon, dir, warned::add, tuner).from());
        assertEquals(
                "default",
                Tuning.resolve("table", "cache", zen3, dir, warned::add, tuner).from());
        // a cache for the CPU: taken over the table and the defaults
        TuneCache.write(dir, xeon, Gemm.MR, SOME, Attention.BC, "x");
        TuneCache.write(dir, zen3, Gemm.MR, SOME, TILE, "z");
        Tuning t = Tuning.resolve("table", "cache", xeon, dir, warned::add, tuner);
        assertEquals("tuned", t.from());
        assertEquals(384, t.kc());
        assertEquals(
                "tuned",
                Tuning.resolve("table", "cache", zen3, dir, warned::add, tuner).from());
        // -Dattn.cpu.tune=off never reads it; -Dattn.cpu.tuning=off or =6/207 decide alone
        assertEquals(
                "table",
                Tuning.resolve("table", "off", xeon, dir, warned::add, tuner).from());
        assertEquals(
                "default",
                Tuning.resolve("table", "off", zen3, dir, warned::add, tuner).from());
        assertEquals(
                2048,
                Tuning.resolve("off", "cache", zen3, dir, warned::add, tuner).kc());
        assertEquals(
                256,
                Tuning.resolve("6/207", "cache", zen3, dir, warned::add, tuner).kc());
        // auto: the cache where there is one, else tuned now
        assertEquals(
                384,
                Tuning.resolve("table", "auto", zen3, dir, warned::add, tuner).kc());
        assertEquals(0, tuned.get());
        Files.delete(TuneCache.file(dir, zen3));
        assertEquals(
                512,
                Tuning.resolve("table", "auto", zen3, dir, warned::add, tuner).kc());
        assertEquals(1, tuned.get());
        assertEquals(
                "default",
                Tuning.resolve("table", "cache", zen3, dir, warned::add, tuner).from());
        assertEquals(1, tuned.get());
        assertEquals(List.of(), warned);
        // a bad file: one line, then the table
        Files.writeString(TuneCache.file(dir, xeon), "{");
        assertEquals(
                "table",
                Tuning.resolve("table", "cache", xeon, dir, warned::add, tuner).from());
        assertEquals(1, warned.size(), warned.toString());
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> Tuning.resolve("table", "always", zen3, dir, s -> {}, tuner));
        assertEquals("-Dattn.cpu.tune must be cache, auto or off, not 'always'", e.getMessage());
    }

    @Test
    void theWinnerReplacesTheStartOnlyByMoreThanTheMargin() {
        Gemm.Blocking start = Tuner.start(), other = new Gemm.Blocking(256, 96, 1024, true);
        Tuner.Timed from = new Tuner.Timed(start, new double[] {105.0, 201.4});
        // a Zen 4's case: a 1.1% lead on the 1024^3 proxy, which lost 8-10% on 2048^3 at 2 threads
        assertFalse(Tuner.moves(new Tuner.Timed(other, new double[] {104.8, 206.2}), from));
        assertFalse(Tuner.moves(new Tuner.Timed(other, new double[] {107.0, 205.0}), from)); // +1.8%
        assertTrue(Tuner.moves(new Tuner.Timed(other, new double[] {109.0, 208.0}), from)); // +3.5%
        assertTrue(Tuner.moves(new Tuner.Timed(other, new double[] {160.0, 300.0}), from)); // a table entry's kind
        assertFalse(Tuner.moves(from, from));
    }

    @Test
    void theSearchOnATinyBudgetReturnsABlockingOfTheSpace() {
        List<String> log = new ArrayList<>();
        Gemm.Blocking start = Tuner.start();
        Tuner.Result r = Tuner.search(start, 0, 64, new int[] {1, 2}, log::add);
        Gemm.Blocking b = r.best().blocking();
        assertTrue(Tuner.space().contains(b) || b.equals(start), b.toString());
        assertEquals(2, r.best().gflops().length);
        for (double g : r.best().gflops()) assertTrue(g > 0 && Double.isFinite(g), r.toString());
        assertTrue(r.evaluated() >= 2, r.toString());
        assertTrue(log.get(0).startsWith("start: "), log.toString());
        // a budget for a few candidates: still a blocking of the space, which computes exact products
        r = Tuner.search(start, 0.5, 96, new int[] {1}, s -> {});
        b = r.best().blocking();
        assertTrue(Tuner.space().contains(b) || b.equals(start), b.toString());
        exact(List.of(b));
        // the entry for the table names this CPU's key and the values
        String entry = Tuner.entry(here(25, 1, 2), b, TILE, "x");
        assertTrue(entry.startsWith("new Entry(25, 1, "), entry);
        assertTrue(
                entry.contains(
                        ", " + b.kc() + ", " + b.mc() / Gemm.MR + ", " + b.nc() + ", " + b.packA() + ", " + TILE),
                entry);
    }

    @Test
    void theKeyTileIsTimedOnlyWhereThereIsAChoice() {
        List<String> log = new ArrayList<>();
        // one width (what 512-bit vectors allow): not timed, the start kept
        Tuner.TileResult one =
                Tuner.tuneCausalTile(Attention.BC, 5, new int[] {1, 2}, log::add, new int[] {Attention.BC});
        assertEquals(Attention.BC, one.best());
        assertEquals(0, one.rounds());
        assertEquals(
                List.of("causal attention: one key tile width with this JVM's vectors (" + Attention.BC
                        + " keys), not timed"),
                log);
        // every width this JVM allows, on a tiny budget: at least 3 rounds, a finite figure per width and thread count,
        // and a width of the list; with 512-bit vectors that list is the one width, so again nothing is timed (the
        // timed case runs in CI's 256-bit pass, -XX:UseAVX=2)
        Tuner.TileResult r = Tuner.tuneCausalTile(Attention.BC, 0, new int[] {1, 2}, s -> {});
        if (Attention.keyTiles().length < 2) {
            assertEquals(Attention.BC, r.best());
            assertEquals(0, r.rounds());
            assertEquals(0, Tuner.tileSeconds(10), 0);
            return;
        }
        assertTrue(r.rounds() >= 3, r.toString());
        assertTrue(java.util.Arrays.stream(Attention.keyTiles()).anyMatch(w -> w == r.best()), r.toString());
        for (double[] ms : r.ms()) for (double x : ms) assertTrue(x > 0 && Double.isFinite(x), r.toString());
        assertTrue(
                r.describe().startsWith("causal attention 2x8x512x64, ms per call at [1, 2] threads:"), r.describe());
        assertEquals(Attention.keyTiles().length < 2 ? 0 : 1, Tuner.tileSeconds(10), 0);
    }

    @Test
    void everyBlockingTheSearchMayChooseComputesExactProducts() {
        List<Gemm.Blocking> space = Tuner.space();
        assertEquals(Tuner.KC.length * Tuner.MC_TILES.length * Tuner.NC.length * 2, space.size());
        assertTrue(space.contains(Tuner.start())
                || !Tuning.choose("table", CpuInfo.host()).from().equals("default"));
        exact(space);
    }

    /**
     * Each blocking on products whose blocks it cuts (several K steps, row blocks and column blocks, edge tiles, A
     * transposed and scaled), on 2 threads: within a float32 bound of a double-precision product, and bitwise equal to
     * every other blocking with the same K step (only the K step orders the sums).
     */
    private static void exact(List<Gemm.Blocking> blockings) {
        Random r = new Random(39);
        int[][] shapes = {{101, 600, 300}, {45, 130, 530}};
        try (Parallel par = new Parallel(2)) {
            for (int[] s : shapes) {
                int m = s[0], n = s[1], k = s[2];
                float[] a = new float[m * k], b = new float[k * n];
                for (int i = 0; i < a.length; i++) a[i] = r.nextFloat() * 2 - 1;
                for (int i = 0; i < b.length; i++) b[i] = r.nextFloat() * 2 - 1;
                boolean trans = m == 45; // the second shape: A and B transposed, alpha 0.5
                float alpha = trans ? 0.5f : 1f;
                double[] want = new double[m * n], bound = new double[m * n];
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double sum = 0, abs = 0;
                        for (int p = 0; p < k; p++) {
                            double x = trans ? a[p * m + i] : a[i * k + p], y = trans ? b[j * k + p] : b[p * n + j];
                            sum += x * y;
                            abs += Math.abs(x * y);
                        }
                        want[i * n + j] = alpha * sum;
                        bound[i * n + j] = (k + 2) * 0x1p-23 * alpha * abs; // (k + 2) u |A||B|, u = 2^-24, doubled
                    }
                Map<Integer, float[]> byKc = new HashMap<>();
                for (Gemm.Blocking bl : blockings) {
                    float[] c = new float[m * n];
                    java.util.Arrays.fill(c, Float.NaN); // every element must be written
                    Gemm.gemm(
                            bl,
                            par,
                            1,
                            m,
                            n,
                            k,
                            alpha,
                            a,
                            0,
                            0,
                            trans,
                            b,
                            0,
                            0,
                            trans,
                            c,
                            0,
                            0,
                            Gemm.Epilogue.NONE,
                            null);
                    for (int i = 0; i < c.length; i++)
                        if (!(Math.abs(c[i] - want[i]) <= bound[i]))
                            throw new AssertionError(bl + " " + m + "x" + n + "x" + k + ": element " + i + " is " + c[i]
                                    + ", the double product " + want[i] + ", bound " + bound[i]);
                    float[] same = byKc.putIfAbsent(Math.min(bl.kc(), k), c);
                    if (same != null)
                        assertArrayEquals(same, c, bl + ": bits differ from another blocking with its K step");
                }
            }
        }
    }
}
