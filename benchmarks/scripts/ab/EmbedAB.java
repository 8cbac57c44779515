import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * Builds of attn side by side in one JVM, on sentence embeddings: each lib folder's io.attn jars (the {@code
 * *-SNAPSHOT.jar}s) in a class loader of its own, the third-party jars of the first folder in one shared parent (DJL's
 * tokenizers load their native library once per JVM). Rounds alternate the builds, and which goes first; each round
 * times {@code reps} passes per build. Prints each round's ms per pass and the ratios to the first build, then the
 * median ratio: > 1 means the other build is faster. Same-JVM rounds cancel most of the drift between processes that
 * makes whole-process A/B runs on a VM spread by 1.5x. JVM flags: {@code ATTN_JAVA_OPTS} (e.g. {@code -Dab.warmup-s=30}).
 *
 * <p>{@code java EmbedAB MODEL TEXTS THREADS BATCH ROUNDS REPS DRIVER_CLASSES LIB_A LIB_B [LIB_C ...]} (BATCH 0: all
 * texts in one call).
 */
public final class EmbedAB {
    public static void main(String[] a) throws Exception {
        String model = a[0], input = a[1];
        int threads = Integer.parseInt(a[2]), batch = Integer.parseInt(a[3]);
        int rounds = Integer.parseInt(a[4]), reps = Integer.parseInt(a[5]);
        URL driver = Path.of(a[6]).toUri().toURL();
        List<String> libs = Arrays.asList(a).subList(7, a.length);
        List<URL> common = new ArrayList<>();
        for (Path p : jars(libs.get(0).replaceFirst("#.*", ""))) if (!p.toString().endsWith("-SNAPSHOT.jar")) common.add(p.toUri().toURL());
        ClassLoader parent = new URLClassLoader(common.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
        List<ToLongFunction<Integer>> sides = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String side : libs) {
            // LIB or LIB#OPTIONS (EmbedDriver's: task=T,adapters=merge|share): one build under several settings
            String lib = side.contains("#") ? side.substring(0, side.indexOf('#')) : side;
            System.setProperty("ab.options", side.contains("#") ? side.substring(side.indexOf('#') + 1) : "");
            List<URL> urls = new ArrayList<>(List.of(driver));
            for (Path p : jars(lib)) if (p.toString().endsWith("-SNAPSHOT.jar")) urls.add(p.toUri().toURL());
            ClassLoader cl = new URLClassLoader(urls.toArray(URL[]::new), parent);
            Thread.currentThread().setContextClassLoader(cl); // the engine finds its backends through it
            @SuppressWarnings("unchecked")
            ToLongFunction<Integer> d = (ToLongFunction<Integer>) cl.loadClass("EmbedDriver")
                    .getConstructor(String.class, String.class, Integer.class, Integer.class)
                    .newInstance(model, input, threads, batch);
            sides.add(d);
            names.add(side);
        }
        // warm-up: the sides alternate for ab.warmup-s seconds (default 15) and at least 3 x reps passes each, so that
        // the JIT is done with both before the rounds
        long until = System.nanoTime() + (long) (Double.parseDouble(System.getProperty("ab.warmup-s", "15")) * 1e9);
        for (int w = 0; w < 3 * reps || System.nanoTime() < until; w++) for (var d : sides) d.applyAsLong(1);
        double[][] ms = new double[sides.size()][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < sides.size(); k++) {
                int i = r % 2 == 0 ? k : sides.size() - 1 - k;
                ms[i][r] = sides.get(i).applyAsLong(reps) / 1e6 / reps;
            }
            StringBuilder sb = new StringBuilder("round " + (r + 1) + ":");
            for (int i = 0; i < sides.size(); i++) sb.append(String.format(Locale.ROOT, "  %s %.1f ms", names.get(i), ms[i][r]));
            for (int i = 1; i < sides.size(); i++) sb.append(String.format(Locale.ROOT, "  ratio %d: %.3f", i, ms[0][r] / ms[i][r]));
            System.out.println(sb);
        }
        for (int i = 1; i < sides.size(); i++) {
            double[] q = new double[rounds];
            for (int r = 0; r < rounds; r++) q[r] = ms[0][r] / ms[i][r];
            Arrays.sort(q);
            double med = rounds % 2 == 1 ? q[rounds / 2] : (q[rounds / 2 - 1] + q[rounds / 2]) / 2;
            System.out.printf(Locale.ROOT, "median ratio %s time / %s time: %.3f (rounds %.3f to %.3f)%n",
                    names.get(0), names.get(i), med, q[0], q[rounds - 1]);
        }
        System.exit(0); // the engines' pool threads
    }

    private static List<Path> jars(String dir) throws java.io.IOException {
        try (var s = Files.list(Path.of(dir))) {
            return s.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
        }
    }
}
