package io.attn.cpu.ops;

import io.attn.cpu.CpuInfo;
import io.attn.cpu.Parallel;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Consumer;

/**
 * {@code attn tune}: measures the GEMM's blocking on this machine ({@link Gemm.Blocking}: K step, A rows and B columns
 * per block, A packed or in place) and caches the best for this CPU ({@link TuneCache}).
 *
 * <p><b>What it times.</b> {@code n x n . n x n} products ({@link #SIZE} 1024: the figure the benchmarks and issue 39
 * compare) on one thread and on every core, timed by CPU time ({@link Bench#once}: the blocking's cost, not the
 * machine's load), single calls of each candidate interleaved in rounds, a candidate's figure its best round (the least disturbed by other load), its score the geometric mean of its
 * GFLOP/s over the thread counts. At the end the winner and the start are timed again side by side, and the start
 * stays unless the winner is more than {@link #MOVE_MARGIN} faster there too. <b>The search</b> is coordinate descent over {@link #space}: from the table's or the defaults' blocking, each
 * of A's packing, the K step, the row block and the column block in turn is set to its best value with the others
 * held, in passes until a pass changes nothing (at most {@link #PASSES}); the rounds per candidate follow from the
 * budget. Every blocking of the space is one the GEMM supports ({@link Gemm.Blocking}), so whatever it picks computes
 * the same products within the same bounds. {@link #sweep} times the whole space instead (for measuring the search).
 */
public final class Tuner {
    private Tuner() {}

    /** The default budget, seconds ({@code attn tune}, and {@code -Dattn.cpu.tune=auto} on first use). */
    public static final double DEFAULT_SECONDS = 30;

    /** The product timed: {@code SIZE}^3. */
    public static final int SIZE = 1024;

    /** The K steps searched (at {@code K = 1024} every step from 1024 up is one step: the same product). */
    static final int[] KC = {128, 192, 256, 384, 512, 768, 1024, 2048};

    /** The row blocks searched, in tiles of {@link Gemm#MR} rows (16 to 256 rows with the 4-row tile). */
    static final int[] MC_TILES = {4, 8, 12, 16, 24, 32, 48, 64};

    /** The column blocks searched (multiples of {@link Gemm#NR} at every vector width). */
    static final int[] NC = {256, 512, 1024, 2048};

    /** At most this many passes over the four choices. */
    static final int PASSES = 3;

    /** Every blocking the search may choose: {@link #KC} x {@link #MC_TILES} x {@link #NC} x A packed or in place. */
    static List<Gemm.Blocking> space() {
        List<Gemm.Blocking> all = new ArrayList<>();
        for (boolean packA : new boolean[] {true, false})
            for (int kc : KC)
                for (int t : MC_TILES) for (int nc : NC) all.add(new Gemm.Blocking(kc, t * Gemm.MR, nc, packA));
        return all;
    }

    /** A blocking's figures: GFLOP/s per thread count (the order of {@link Result#threads}). */
    public record Timed(Gemm.Blocking blocking, double[] gflops) {
        /** The geometric mean over the thread counts. */
        public double score() {
            return geomean(gflops);
        }

        /** {@code K step 256, A 64 rows, B 1024 columns, A packed}. */
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "K step %d, A %d rows, B %d columns, A %s",
                    blocking.kc(),
                    blocking.mc(),
                    blocking.nc(),
                    blocking.packA() ? "packed" : "in place");
        }
    }

    /**
     * What a search found: the best blocking and where it started, both timed again side by side at the end, the
     * candidates timed, and how long it took.
     */
    public record Result(int[] threads, Timed best, Timed start, int evaluated, int rounds, double seconds) {}

    private static final java.lang.management.ThreadMXBean MX =
            java.lang.management.ManagementFactory.getThreadMXBean();

    /** Whether products are timed by CPU time ({@link Bench#once}). */
    static final boolean CPU_TIME =
            MX.isCurrentThreadCpuTimeSupported() && MX.isThreadCpuTimeSupported() && cpuTimeEnabled();

    /** The CPU time of every live thread of this JVM, ns. */
    private static long allThreadsCpu() {
        long sum = 0;
        for (long id : MX.getAllThreadIds()) {
            long t = MX.getThreadCpuTime(id);
            if (t > 0) sum += t;
        }
        return sum;
    }

    /**
     * Seconds {@code work} takes on {@code threads} threads, by CPU time where the JVM measures it ({@link Bench#once}):
     * on one thread the calling thread's, on several the CPU time of every thread of the JVM over the thread count.
     * Without CPU time: wall time.
     */
    static double seconds(int threads, Runnable work) {
        boolean single = threads == 1;
        long t0 = !CPU_TIME ? System.nanoTime() : single ? MX.getCurrentThreadCpuTime() : allThreadsCpu();
        work.run();
        long t1 = !CPU_TIME ? System.nanoTime() : single ? MX.getCurrentThreadCpuTime() : allThreadsCpu();
        return (t1 - t0) * 1e-9 / (CPU_TIME ? threads : 1);
    }

    private static boolean cpuTimeEnabled() {
        try {
            if (!MX.isThreadCpuTimeEnabled()) MX.setThreadCpuTimeEnabled(true);
            return MX.isThreadCpuTimeEnabled();
        } catch (UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    /** The products and the pools of one run; {@link #close} ends the pools' threads. */
    static final class Bench implements AutoCloseable {
        final int n;
        final int[] threads;
        private final Parallel[] pools;
        private final float[] a, b, c;

        Bench(int n, int[] threads) {
            this.n = n;
            this.threads = threads.clone();
            this.pools = new Parallel[threads.length];
            for (int i = 0; i < threads.length; i++) pools[i] = new Parallel(threads[i]);
            Random r = new Random(39);
            a = new float[n * n];
            b = new float[n * n];
            c = new float[n * n];
            for (int i = 0; i < a.length; i++) {
                a[i] = r.nextFloat() - 0.5f;
                b[i] = r.nextFloat() - 0.5f;
            }
        }

        /**
         * Seconds for one product with {@code bl} on the {@code t}-th thread count, by CPU time where the JVM measures
         * it: on one thread the calling thread's, on several the CPU time of every thread of the JVM over the thread
         * count (what the product takes where each of its threads has a core to itself). On a shared machine this
         * leaves out the time other processes held the cores, which in wall time decides more than the blocking (a
         * load average of 150-350 on 2 cores moved 2-thread wall figures 3x between rounds); a thread waiting for
         * another's last task spins ({@link Parallel#DEFAULT_SPIN_US}), so waits up to the spin are counted. Without
         * CPU time: wall time.
         */
        double once(Gemm.Blocking bl, int t) {
            return seconds(
                    threads[t],
                    () -> Gemm.gemm(
                            bl,
                            pools[t],
                            1,
                            n,
                            n,
                            n,
                            1f,
                            a,
                            0,
                            0,
                            false,
                            b,
                            0,
                            0,
                            false,
                            c,
                            0,
                            0,
                            Gemm.Epilogue.NONE,
                            null));
        }

        /** The candidates' best times over {@code rounds} rounds, each round every candidate once per thread count. */
        List<Timed> time(List<Gemm.Blocking> candidates, int rounds, Random order) {
            double[][] best = new double[candidates.size()][threads.length];
            for (double[] row : best) Arrays.fill(row, Double.MAX_VALUE);
            List<Integer> idx = new ArrayList<>();
            for (int i = 0; i < candidates.size(); i++) idx.add(i);
            for (int r = 0; r < rounds; r++) {
                Collections.shuffle(idx, order); // no candidate always right after the same one
                for (int i : idx)
                    for (int t = 0; t < threads.length; t++)
                        best[i][t] = Math.min(best[i][t], once(candidates.get(i), t));
            }
            double flops = 2.0 * n * n * n;
            List<Timed> out = new ArrayList<>();
            for (int i = 0; i < candidates.size(); i++) {
                double[] g = new double[threads.length];
                for (int t = 0; t < threads.length; t++) g[t] = flops / best[i][t] / 1e9;
                out.add(new Timed(candidates.get(i), g));
            }
            return out;
        }

        /** Compiles both kernels: each packing, every thread count, about {@code seconds} (at least 3 calls each). */
        void warm(Gemm.Blocking start, double seconds) {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            Gemm.Blocking other = new Gemm.Blocking(start.kc(), start.mc(), start.nc(), !start.packA());
            for (int i = 0; i < 3 || System.nanoTime() < end; i++)
                for (int t = 0; t < threads.length; t++) {
                    once(start, t);
                    once(other, t);
                }
        }

        @Override
        public void close() {
            for (Parallel p : pools) p.close();
        }
    }

    /** 1 and every core ({@code cores} > 1), or 1. */
    public static int[] defaultThreads(int cores) {
        return cores > 1 ? new int[] {1, cores} : new int[] {1};
    }

    /** The blocking this JVM would take without a cache: the table's entry or the defaults (a search's start). */
    static Gemm.Blocking start() {
        Tuning t = Tuning.choose("table", CpuInfo.host());
        return new Gemm.Blocking(
                t.kc(), t.mcTiles() * Gemm.MR, Math.max(Gemm.NR, t.nc() / Gemm.NR * Gemm.NR), t.packA());
    }

    /** Values of one choice: {@code values} and the incumbent's, in order. */
    private static int[] with(int[] values, int current) {
        return Arrays.stream(values).anyMatch(v -> v == current)
                ? values
                : java.util.stream.IntStream.concat(Arrays.stream(values), java.util.stream.IntStream.of(current))
                        .sorted()
                        .toArray();
    }

    /**
     * The search: coordinate descent from {@code start} over {@link #space} within about {@code seconds} (a tenth of
     * it, at most 2 s, compiling the kernels first), on {@code n}^3 products at each of {@code threads}; progress to
     * {@code log}. Any budget returns a blocking of the space or {@code start} (a tiny one: after one round of the first
     * choice).
     */
    public static Result search(Gemm.Blocking start, double seconds, int n, int[] threads, Consumer<String> log) {
        long t0 = System.nanoTime(), end = t0 + (long) (seconds * 1e9);
        Random order = new Random(1);
        try (Bench bench = new Bench(n, threads)) {
            bench.warm(start, Math.min(2, seconds / 10));
            // rounds per candidate from the budget: about 2 passes of 25 candidates, each a product per thread count
            long w0 = System.nanoTime();
            Timed first = bench.time(List.of(start), 1, order).get(0);
            double perCandidate = (System.nanoTime() - w0) * 1e-9; // wall: what the budget is spent in
            double left = (end - System.nanoTime()) * 1e-9 - 2 * perCandidate * 3; // keep the final comparison's time
            int rounds = (int) Math.max(1, Math.min(9, left / (2 * 25 * perCandidate)));
            log.accept(String.format(
                    Locale.ROOT,
                    "start: %s, %s GFLOP/s at %s threads; %d rounds per candidate",
                    first.describe(),
                    figures(first.gflops()),
                    Arrays.toString(threads),
                    rounds));
            Gemm.Blocking cur = start;
            int evaluated = 0;
            for (int pass = 0; pass < PASSES; pass++) {
                Gemm.Blocking before = cur;
                for (int choice = 0; choice < 4 && (pass + choice == 0 || System.nanoTime() < end); choice++) {
                    List<Gemm.Blocking> cands = new ArrayList<>();
                    Gemm.Blocking c = cur;
                    switch (choice) {
                        case 0 -> {
                            cands.add(c);
                            cands.add(new Gemm.Blocking(c.kc(), c.mc(), c.nc(), !c.packA()));
                        }
                        case 1 -> {
                            for (int kc : with(KC, c.kc())) cands.add(new Gemm.Blocking(kc, c.mc(), c.nc(), c.packA()));
                        }
                        case 2 -> {
                            for (int t : with(MC_TILES, c.mc() / Gemm.MR))
                                cands.add(new Gemm.Blocking(c.kc(), t * Gemm.MR, c.nc(), c.packA()));
                        }
                        default -> {
                            for (int nc : with(NC, c.nc())) cands.add(new Gemm.Blocking(c.kc(), c.mc(), nc, c.packA()));
                        }
                    }
                    List<Timed> timed = bench.time(cands, rounds, order);
                    evaluated += cands.size();
                    Timed best = timed.get(0);
                    for (Timed t : timed) if (t.score() > best.score()) best = t;
                    cur = best.blocking();
                    log.accept(String.format(
                            Locale.ROOT,
                            "pass %d, %s: %s (%s GFLOP/s)",
                            pass + 1,
                            new String[] {"A packed or in place", "K step", "row block", "column block"}[choice],
                            best.describe(),
                            figures(best.gflops())));
                }
                if (cur.equals(before) || System.nanoTime() >= end) break;
            }
            // the winner and the start side by side, for the figure the command prints; the start stays unless the
            // winner beats it here too, by more than MOVE_MARGIN (a lucky round on a loaded machine is not a reason to
            // move, nor is a gain within the noise of a proxy: see there)
            List<Timed> last = bench.time(cur.equals(start) ? List.of(cur) : List.of(cur, start), rounds + 2, order);
            Timed best = last.get(0), from = last.get(last.size() - 1);
            if (!moves(best, from)) {
                if (!cur.equals(start))
                    log.accept(String.format(
                            Locale.ROOT,
                            "the start timed within %.0f%% of %s side by side: keeping the start",
                            100 * MOVE_MARGIN,
                            best.describe()));
                best = from;
            }
            return new Result(threads.clone(), best, from, evaluated, rounds, (System.nanoTime() - t0) * 1e-9);
        }
    }

    /**
     * How much faster (score, side by side) the search's winner must be to replace the start: 3%, as for the causal key
     * tile. The search times {@link #SIZE}^3 products, a proxy for every product the engine runs, and a blocking that
     * ties there can lose elsewhere: on a Zen 4 (family 25 model 17, 2026-12-07) the search moved to K step 1024 and
     * 2048-column blocks on a 1.1% lead (104.8 / 206.2 against 105.0 / 201.4 GFLOP/s at 1 / 2 threads), which ran
     * 2048^3 at 2 threads 8-10% slower than the defaults (93.5-96.6 against 85.8-86.9 ms).
     */
    static final double MOVE_MARGIN = 0.03;

    /** Whether {@code winner} replaces {@code start}: a score more than {@link #MOVE_MARGIN} higher. */
    static boolean moves(Timed winner, Timed start) {
        return winner.score() > start.score() * (1 + MOVE_MARGIN);
    }

    /**
     * Every blocking of {@link #space}, {@code rounds} rounds each (interleaved, so drifting load touches them alike),
     * on {@code n}^3 products at each of {@code threads}, and {@code also} where it is not in the space: {@code attn
     * tune --sweep}, the judge of {@link #search}.
     */
    public static List<Timed> sweep(int rounds, int n, int[] threads, Gemm.Blocking also, Consumer<String> log) {
        try (Bench bench = new Bench(n, threads)) {
            List<Gemm.Blocking> all = space();
            if (also != null && !all.contains(also)) all.add(also);
            bench.warm(all.get(0), 2);
            log.accept("sweep: " + all.size() + " blockings, " + rounds + " rounds");
            return bench.time(all, rounds, new Random(2));
        }
    }

    /** {@code blockings} timed side by side, {@code rounds} rounds, in their order. */
    static List<Timed> confirm(List<Gemm.Blocking> blockings, int rounds, int n, int[] threads) {
        try (Bench bench = new Bench(n, threads)) {
            bench.warm(blockings.get(0), 1);
            return bench.time(blockings, rounds, new Random(3));
        }
    }

    /** Causal attention's shape for the key tile: {@code B x H x L x D}, {@code L = S}. */
    static final int TILE_B = 2, TILE_H = 8, TILE_L = 512, TILE_D = 64;

    /**
     * What the key tile's measurement found: the chosen width and the start's, and each width's milliseconds per call
     * at each thread count (its best round), in {@link Attention#keyTiles} order.
     */
    public record TileResult(int best, int start, int[] threads, int[] widths, double[][] ms, int rounds) {
        double[] of(int width) {
            for (int i = 0; i < widths.length; i++) if (widths[i] == width) return ms[i];
            throw new IllegalArgumentException("width " + width);
        }

        /** {@code causal attention 2x8x512x64, ms per call at [1, 2] threads: 32 keys 12.39/8.33; 64 keys ...}. */
        String describe() {
            if (rounds == 0)
                return "causal attention: one key tile width with this JVM's vectors (" + best + " keys), not timed";
            StringBuilder line = new StringBuilder("causal attention " + TILE_B + "x" + TILE_H + "x" + TILE_L + "x"
                    + TILE_D + ", ms per call at " + Arrays.toString(threads) + " threads:");
            for (int i = 0; i < widths.length; i++)
                line.append(String.format(Locale.ROOT, " %d keys %s;", widths[i], Tuner.ms(ms[i])));
            return line.append(" key tile ")
                    .append(best)
                    .append(best == start ? " (the start, kept)" : " (the start: " + start + ")")
                    .toString();
        }
    }

    /**
     * Causal attention's key tile ({@link Tuning#causalKeyTile}): {@code TILE_B x TILE_H x 512 x 64} causal attention
     * with every width this JVM's vectors allow ({@link Attention#keyTiles}), by CPU time as the products ({@link
     * Bench#once}), widths interleaved in rounds for about {@code seconds}, each width's figure its best round and its
     * score the geometric mean over the thread counts. The start stays unless a width is more than 3% faster (a
     * measured difference, not noise: the diagonal tiles take the masked path, so narrower tiles can pay; on Zen 3 32
     * keys were 7-16% faster than 64, docs/performance.md).
     */
    static TileResult tuneCausalTile(int start, double seconds, int[] threads, Consumer<String> log) {
        return tuneCausalTile(start, seconds, threads, log, Attention.keyTiles());
    }

    /**
     * {@link #tuneCausalTile} over {@code widths} (and {@code start}): a single width (512-bit vectors allow only 64
     * keys) is not timed.
     */
    static TileResult tuneCausalTile(int start, double seconds, int[] threads, Consumer<String> log, int[] widths) {
        if (Arrays.stream(widths).noneMatch(w -> w == start)) widths = with(widths, start);
        if (widths.length == 1) {
            TileResult only = new TileResult(start, start, threads.clone(), widths, new double[1][0], 0);
            log.accept(only.describe());
            return only;
        }
        io.attn.graph.GraphBuilder g = new io.attn.graph.GraphBuilder();
        io.attn.graph.Node o = g.attention(
                g.input("q", TILE_B, TILE_H, TILE_L, TILE_D),
                g.input("k", TILE_B, TILE_H, TILE_L, TILE_D),
                g.input("v", TILE_B, TILE_H, TILE_L, TILE_D),
                (float) (1 / Math.sqrt(TILE_D)),
                io.attn.graph.MaskSpec.CAUSAL,
                null,
                null);
        int size = TILE_B * TILE_H * TILE_L * TILE_D;
        Random r = new Random(39);
        float[][] in = new float[3][size];
        for (float[] a : in) for (int i = 0; i < size; i++) a[i] = r.nextFloat() - 0.5f;
        float[] out = new float[size];
        Parallel[] pools = new Parallel[threads.length];
        for (int i = 0; i < threads.length; i++) pools[i] = new Parallel(threads[i]);
        try {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            double[][] best = new double[widths.length][threads.length];
            for (double[] row : best) Arrays.fill(row, Double.MAX_VALUE);
            List<Integer> idx = new ArrayList<>();
            for (int i = 0; i < widths.length; i++) idx.add(i);
            Random order = new Random(4);
            // the first rounds compile the kernels (not counted); then rounds until the budget, at least 3
            int rounds = 0;
            for (int round = -2; round < 3 || (round < 50 && System.nanoTime() < end); round++) {
                Collections.shuffle(idx, order);
                for (int i : idx)
                    for (int t = 0; t < threads.length; t++) {
                        Parallel pool = pools[t];
                        int width = widths[i];
                        double ms = 1e3 * seconds(threads[t], () -> Attention.run(pool, o, out, in, width));
                        if (round >= 0) best[i][t] = Math.min(best[i][t], ms);
                    }
                if (round >= 0) rounds++;
            }
            int s0 = 0, b0 = 0;
            for (int i = 0; i < widths.length; i++) {
                if (widths[i] == start) s0 = i;
                if (geomean(best[i]) < geomean(best[b0])) b0 = i;
            }
            int chosen = geomean(best[b0]) < 0.97 * geomean(best[s0]) ? widths[b0] : start;
            TileResult result = new TileResult(chosen, start, threads.clone(), widths, best, rounds);
            log.accept(result.describe());
            return result;
        } finally {
            for (Parallel p : pools) p.close();
        }
    }

    /** The geometric mean of {@code x}. */
    static double geomean(double[] x) {
        double s = 0;
        for (double v : x) s += Math.log(v);
        return Math.exp(s / x.length);
    }

    /** Milliseconds, {@code 11.52/6.31}. */
    static String ms(double[] ms) {
        StringBuilder sb = new StringBuilder();
        for (double g : ms) sb.append(sb.isEmpty() ? "" : "/").append(String.format(Locale.ROOT, "%.2f", g));
        return sb.toString();
    }

    /**
     * The seconds of a {@code seconds} budget that the key tile's measurement takes: a tenth, 1 to 4 s; none where the
     * vectors allow one width only.
     */
    static double tileSeconds(double seconds) {
        return Attention.keyTiles().length < 2 ? 0 : Math.max(1, Math.min(4, seconds / 10));
    }

    /** GFLOP/s figures, {@code 75.1/130.2}. */
    static String figures(double[] gflops) {
        StringBuilder sb = new StringBuilder();
        for (double g : gflops) sb.append(sb.isEmpty() ? "" : "/").append(String.format(Locale.ROOT, "%.1f", g));
        return sb.toString();
    }

    /** The line {@link TuneCache} keeps as {@code measured}: when, and the figures. */
    static String measured(Result r, TileResult tile) {
        String key = tile.rounds() == 0
                ? String.format(Locale.ROOT, "causal attention key tile %d (the only width)", tile.best())
                : String.format(
                        Locale.ROOT,
                        "causal attention key tile %d: %s ms (%d: %s)",
                        tile.best(),
                        ms(tile.of(tile.best())),
                        tile.start(),
                        ms(tile.of(tile.start())));
        return String.format(
                Locale.ROOT,
                "%s, %d^3 %s GFLOP/s at %s threads (start %s); %s",
                Instant.now().truncatedTo(ChronoUnit.SECONDS),
                SIZE,
                figures(r.best().gflops()),
                Arrays.toString(r.threads()).replace(" ", ""),
                figures(r.start().gflops()),
                key);
    }

    /** One {@code attn tune} run: the GEMM search, then the key tile, and the line the cache keeps. */
    record Tuned(Result gemm, TileResult tile, String measured) {}

    /** The GEMM search and the key tile on {@code threads} within about {@code seconds} in all (the tile's share first). */
    static Tuned tune(double seconds, int[] threads, Consumer<String> log) {
        Result r = search(start(), seconds - tileSeconds(seconds), SIZE, threads, log);
        TileResult tile = tuneCausalTile(startTile(), tileSeconds(seconds), threads, log);
        return new Tuned(r, tile, measured(r, tile));
    }

    /** The causal key tile this JVM would take without a cache: the table's or the default (the measurement's start). */
    static int startTile() {
        return Tuning.choose("table", CpuInfo.host()).causalTile();
    }

    /**
     * Searches for about {@code seconds} on this machine and writes the cache ({@code -Dattn.cpu.tune=auto} on first
     * use; a cache that cannot be written is said in one line, and the result is used all the same).
     */
    static Tuning tuneAndSave(double seconds, Consumer<String> log) {
        CpuInfo cpu = CpuInfo.host();
        Tuned t = tune(seconds, defaultThreads(cpu.cores()), log);
        Result r = t.gemm();
        TileResult tile = t.tile();
        String measured = t.measured();
        Path dir = TuneCache.dir();
        String where;
        try {
            where = dir == null
                    ? "not cached (no cache directory)"
                    : "cached in " + TuneCache.write(dir, cpu, Gemm.MR, r.best().blocking(), tile.best(), measured);
        } catch (IOException | RuntimeException e) {
            where = "not cached: " + e.getMessage();
        }
        log.accept(r.best().describe() + ", causal key tile " + tile.best() + ", " + where);
        Gemm.Blocking b = r.best().blocking();
        return new Tuning(
                b.kc(),
                b.mc() / Gemm.MR,
                b.nc(),
                b.packA(),
                tile.best(),
                "tuned",
                "tuned now by -D" + Tuning.TUNE + "=auto, " + measured);
    }

    /**
     * {@code attn tune}: the search on this machine for about {@code req.seconds()}, the cache written ({@code
     * req.save()}), and with {@code req.sweep()} every blocking of the space timed after it (the search's winner among
     * them, so that its figure and the sweep's best come from the same rounds).
     */
    public static io.attn.engine.Tune.Report run(io.attn.engine.Tune.Request req, Consumer<String> log) {
        CpuInfo cpu = CpuInfo.host();
        int[] threads = defaultThreads(cpu.cores());
        Tuned run = tune(req.seconds(), threads, log);
        Result r = run.gemm();
        TileResult tile = run.tile();
        String measured = run.measured();
        List<String> lines = new ArrayList<>();
        java.util.Map<String, Object> json = new java.util.LinkedHashMap<>();
        json.put("cpu", io.attn.io.Json.parse(cpu.json()));
        json.put("size", SIZE);
        json.put("threads", Arrays.stream(threads).boxed().toList());
        json.put("seconds", Math.round(r.seconds() * 10) / 10.0);
        json.put("evaluated", r.evaluated());
        json.put("rounds", r.rounds());
        json.put("tuned", blockingJson(r.best()));
        json.put("start", blockingJson(r.start()));
        java.util.Map<String, Object> tj = new java.util.LinkedHashMap<>();
        tj.put("shape", List.of(TILE_B, TILE_H, TILE_L, TILE_D));
        tj.put("tuned", tile.best());
        tj.put("start", tile.start());
        tj.put("rounds", tile.rounds());
        java.util.Map<String, Object> perWidth = new java.util.LinkedHashMap<>();
        for (int i = 0; i < tile.widths().length; i++) {
            List<Object> ms = new ArrayList<>();
            for (double x : tile.ms()[i]) ms.add(Math.round(x * 1000) / 1000.0);
            perWidth.put(Integer.toString(tile.widths()[i]), ms);
        }
        tj.put("ms", perWidth);
        json.put("causal_key_tile", tj);
        lines.add(String.format(
                Locale.ROOT,
                "tuned in %.1f s (%d candidates, %d rounds each): %s",
                r.seconds(),
                r.evaluated(),
                r.rounds(),
                r.best().describe()));
        lines.add(String.format(
                Locale.ROOT,
                "%d^3 GFLOP/s at %s threads: %s tuned, %s %s",
                SIZE,
                Arrays.toString(threads),
                figures(r.best().gflops()),
                figures(r.start().gflops()),
                Tuning.choose("table", cpu).from().equals("table") ? "the table's" : "the defaults"));
        lines.add(tile.describe());
        if (req.save()) {
            Path dir = TuneCache.dir();
            if (dir == null) lines.add("not cached: no cache directory (set -D" + TuneCache.DIR + ")");
            else
                try {
                    Path f = TuneCache.write(dir, cpu, Gemm.MR, r.best().blocking(), tile.best(), measured);
                    lines.add("cached in " + f + " (used by every JVM on this CPU unless -D" + Tuning.TUNE + "=off)");
                    json.put("cache", f.toString());
                } catch (IOException e) {
                    lines.add("not cached: " + e.getMessage());
                }
        }
        if (req.sweep()) {
            List<Timed> all = new ArrayList<>(
                    sweep(req.sweepRounds(), SIZE, threads, r.best().blocking(), log));
            Timed tuned = null;
            double[] best = new double[threads.length];
            Timed[] bestOf = new Timed[threads.length];
            Timed bestScore = all.get(0);
            for (Timed t : all) {
                if (t.blocking().equals(r.best().blocking())) tuned = t;
                if (t.score() > bestScore.score()) bestScore = t;
                for (int i = 0; i < threads.length; i++)
                    if (t.gflops()[i] > best[i]) {
                        best[i] = t.gflops()[i];
                        bestOf[i] = t;
                    }
            }
            java.util.Map<String, Object> sw = new java.util.LinkedHashMap<>();
            sw.put("blockings", all.size());
            sw.put("rounds", req.sweepRounds());
            List<Object> perThread = new ArrayList<>();
            for (int i = 0; i < threads.length; i++) {
                java.util.Map<String, Object> m = blockingJson(bestOf[i]);
                m.put("threads", threads[i]);
                m.put("tuned_gflops", round(tuned.gflops()[i]));
                m.put("tuned_over_best", Math.round(tuned.gflops()[i] / best[i] * 1000) / 1000.0);
                perThread.add(m);
                lines.add(String.format(
                        Locale.ROOT,
                        "sweep, %d thread%s: best %.1f GFLOP/s (%s); the tuned blocking %.1f in the same rounds: %.3fx",
                        threads[i],
                        threads[i] == 1 ? "" : "s",
                        best[i],
                        bestOf[i].describe(),
                        tuned.gflops()[i],
                        tuned.gflops()[i] / best[i]));
            }
            sw.put("best_per_thread_count", perThread);
            sw.put("best_score", blockingJson(bestScore));
            sw.put("tuned", blockingJson(tuned));
            List<Object> every = new ArrayList<>();
            for (Timed t : all) every.add(blockingJson(t));
            sw.put("all", every);
            // the sweep's best of hundreds of noisy figures is partly luck: its leaders (the 5 best scores and the
            // best per thread count) and the tuned blocking again, side by side, with more rounds
            List<Gemm.Blocking> leaders = new ArrayList<>();
            leaders.add(tuned.blocking());
            all.stream()
                    .sorted((x, y) -> Double.compare(y.score(), x.score()))
                    .limit(5)
                    .forEach(t -> leaders.add(t.blocking()));
            for (Timed t : bestOf) leaders.add(t.blocking());
            List<Gemm.Blocking> distinct = leaders.stream().distinct().toList();
            List<Timed> again = confirm(distinct, 2 * req.sweepRounds() + 1, SIZE, threads);
            Timed tunedAgain = again.get(0);
            List<Object> confirmed = new ArrayList<>();
            for (int i = 0; i < threads.length; i++) {
                Timed top = again.get(0);
                for (Timed t : again) if (t.gflops()[i] > top.gflops()[i]) top = t;
                java.util.Map<String, Object> m = blockingJson(top);
                m.put("threads", threads[i]);
                m.put("tuned_gflops", round(tunedAgain.gflops()[i]));
                m.put("tuned_over_best", Math.round(tunedAgain.gflops()[i] / top.gflops()[i] * 1000) / 1000.0);
                confirmed.add(m);
                lines.add(String.format(
                        Locale.ROOT,
                        "the sweep's %d leaders again (%d rounds), %d thread%s: best %.1f GFLOP/s (%s); tuned %.1f: %.3fx",
                        distinct.size(),
                        2 * req.sweepRounds() + 1,
                        threads[i],
                        threads[i] == 1 ? "" : "s",
                        top.gflops()[i],
                        top.describe(),
                        tunedAgain.gflops()[i],
                        tunedAgain.gflops()[i] / top.gflops()[i]));
            }
            sw.put("leaders_again", confirmed);
            json.put("sweep", sw);
        }
        return new io.attn.engine.Tune.Report(
                lines, io.attn.io.Json.write(json), entry(cpu, r.best().blocking(), tile.best(), measured));
    }

    private static double round(double g) {
        return Math.round(g * 10) / 10.0;
    }

    private static java.util.Map<String, Object> blockingJson(Timed t) {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("kc", t.blocking().kc());
        m.put("mc", t.blocking().mc());
        m.put("nc", t.blocking().nc());
        m.put("a", t.blocking().packA() ? "packed" : "in place");
        List<Object> g = new ArrayList<>();
        for (double x : t.gflops()) g.add(round(x));
        m.put("gflops", g);
        return m;
    }

    /** The table entry for {@code Tuning.TABLE} that {@code b} would be on this CPU ({@code attn tune --print}). */
    static String entry(CpuInfo cpu, Gemm.Blocking b, int causalTile, String measured) {
        return String.format(
                Locale.ROOT,
                "new Entry(%d, %d, %d, %d, %d, %d, %b, %d, \"%s: %s\")",
                cpu.family(),
                cpu.model(),
                cpu.vectorBits(),
                b.kc(),
                b.mc() / Gemm.MR,
                b.nc(),
                b.packA(),
                causalTile,
                cpu.name().replace("\"", "'"),
                "attn tune " + measured.replace("\"", "'"));
    }
}
