package io.attn.cuda;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Finds a cuBLAS shared library to bind with {@code java.lang.foreign}, trying {@code libcublas.so.13} then {@code
 * libcublas.so.12} in each place, in this order:
 *
 * <ol>
 *   <li>the backend option {@code cublas.path} ({@code BackendOptions.extra}): a library file or a directory;
 *   <li>the environment variable {@code ATTN_CUBLAS}: a file or a directory;
 *   <li>the dynamic linker's own search ({@code LD_LIBRARY_PATH}, the ldconfig cache, system directories);
 *   <li>{@code $CUDA_HOME} and {@code $CUDA_PATH}: {@code lib64}, {@code lib}, {@code targets/x86_64-linux/lib};
 *   <li>{@code /usr/local/cuda/lib64}, then {@code /usr/local/cuda-*}{@code /lib64}, newest first;
 *   <li>pip wheels ({@code nvidia-cublas-cu13} / {@code -cu12}): {@code nvidia/cublas/lib} (and {@code nvidia/cu13/lib})
 *       under the {@code site-packages} / {@code dist-packages} of {@code $VIRTUAL_ENV}, {@code $CONDA_PREFIX},
 *       {@code ~/.local}, {@code /usr/local}, {@code /usr}, {@code /opt/conda}.
 * </ol>
 *
 * A library counts as found when it loads and exports {@code cublasSgemmStridedBatched}. Every place looked is
 * recorded, so "not found" can list them all.
 */
@SuppressWarnings("restricted")
final class CublasLocator {
    static final List<String> SONAMES = List.of("libcublas.so.13", "libcublas.so.12");
    static final String OPTION = "cublas.path", ENV = "ATTN_CUBLAS";

    private CublasLocator() {}

    /** A loaded library: its symbols, soname, where it came from, and the places tried before it. */
    record Found(SymbolLookup symbols, String soname, String where, List<String> looked) {}

    /** The outcome: {@code found} is null when nothing loaded; {@code looked} lists every place tried. */
    record Result(Found found, List<String> looked) {
        String notFoundMessage() {
            return "no cuBLAS library found (tried " + String.join("; ", looked) + ")";
        }

        /** The short form, for the backend's one-line description (the probe gives the full list). */
        String notFoundSummary() {
            return "no cuBLAS library found in " + looked.size() + " places (the cuda probe lists them)";
        }
    }

    static Result locate(Map<String, String> extra) {
        return locate(extra, System::getenv, System.getProperty("user.home", ""));
    }

    static Result locate(Map<String, String> extra, Function<String, String> env, String home) {
        List<String> looked = new ArrayList<>();
        Found f = tryExplicit(extra.get(OPTION), "option " + OPTION, looked);
        if (f == null) f = tryExplicit(env.apply(ENV), "env " + ENV, looked);
        if (f != null) return new Result(f, looked);
        for (String so : SONAMES) {
            try {
                SymbolLookup l = SymbolLookup.libraryLookup(so, Arena.global());
                if (l.find("cublasSgemmStridedBatched").isPresent())
                    return new Result(new Found(l, so, loadedPath(so), List.copyOf(looked)), looked);
                looked.add("linker path: " + so + " lacks cublasSgemmStridedBatched");
            } catch (IllegalArgumentException e) {
                looked.add("linker path (LD_LIBRARY_PATH, ldconfig): " + so + " not found");
            }
        }
        for (Path dir : directories(env, home)) {
            f = tryDir(dir, looked);
            if (f != null) return new Result(f, looked);
        }
        return new Result(null, looked);
    }

    /** Tries each entry of a ':'-separated path list; the places it looked are labelled with where it came from. */
    private static Found tryExplicit(String value, String label, List<String> looked) {
        if (value == null || value.isBlank()) return null;
        for (String s : value.split(":")) {
            if (s.isBlank()) continue;
            int before = looked.size();
            Found f = tryPath(Path.of(s.trim()), looked);
            if (f != null) return f;
            for (int i = before; i < looked.size(); i++) looked.set(i, label + ": " + looked.get(i));
        }
        return null;
    }

    private static Found tryPath(Path p, List<String> looked) {
        if (Files.isDirectory(p)) return tryDir(p, looked);
        if (!Files.exists(p)) {
            looked.add(p + " (does not exist)");
            return null;
        }
        return tryFile(p, looked);
    }

    private static Found tryDir(Path dir, List<String> looked) {
        if (!Files.isDirectory(dir)) {
            looked.add(dir + " (no such directory)");
            return null;
        }
        boolean any = false;
        for (String so : SONAMES) {
            Path f = dir.resolve(so);
            if (!Files.exists(f)) continue;
            any = true;
            Found found = tryFile(f, looked);
            if (found != null) return found;
        }
        if (!any) looked.add(dir + " (no " + String.join(" or ", SONAMES) + ")");
        return null;
    }

    private static Found tryFile(Path f, List<String> looked) {
        try {
            SymbolLookup l = SymbolLookup.libraryLookup(f, Arena.global());
            if (l.find("cublasSgemmStridedBatched").isEmpty()) {
                looked.add(f + " (loaded, but lacks cublasSgemmStridedBatched)");
                return null;
            }
            String name = f.getFileName().toString();
            return new Found(l, name, f.toString(), List.copyOf(looked));
        } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
            looked.add(f + " (failed to load: " + e.getMessage() + ")");
            return null;
        }
    }

    /** The fixed directories searched after the linker path, in order, without duplicates. */
    static List<Path> directories(Function<String, String> env, String home) {
        Set<Path> dirs = new LinkedHashSet<>();
        for (String var : List.of("CUDA_HOME", "CUDA_PATH")) {
            String v = env.apply(var);
            if (v == null || v.isBlank()) continue;
            Path root = Path.of(v);
            dirs.add(root.resolve("lib64"));
            dirs.add(root.resolve("lib"));
            dirs.add(root.resolve("targets/x86_64-linux/lib"));
        }
        dirs.add(Path.of("/usr/local/cuda/lib64"));
        dirs.addAll(globDirs(Path.of("/usr/local"), "cuda-*", "lib64"));
        List<Path> prefixes = new ArrayList<>();
        for (String var : List.of("VIRTUAL_ENV", "CONDA_PREFIX")) {
            String v = env.apply(var);
            if (v != null && !v.isBlank()) prefixes.add(Path.of(v));
        }
        if (home != null && !home.isBlank()) prefixes.add(Path.of(home, ".local"));
        prefixes.add(Path.of("/usr/local"));
        prefixes.add(Path.of("/usr"));
        prefixes.add(Path.of("/opt/conda"));
        for (Path prefix : prefixes)
            for (Path py : globDirs(prefix.resolve("lib"), "python3*", ""))
                for (String pk : List.of("site-packages", "dist-packages"))
                    for (String sub : List.of("nvidia/cublas/lib", "nvidia/cu13/lib"))
                        dirs.add(py.resolve(pk).resolve(sub));
        dirs.add(Path.of("/usr/lib/python3/dist-packages/nvidia/cublas/lib"));
        return List.copyOf(dirs);
    }

    /** {@code parent/<glob>/child} for each existing match, newest-looking (reverse name order) first. */
    private static List<Path> globDirs(Path parent, String glob, String child) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(parent)) return out;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent, glob)) {
            for (Path p : ds) if (Files.isDirectory(p)) out.add(child.isEmpty() ? p : p.resolve(child));
        } catch (IOException ignored) {
            // an unreadable directory is simply not searched
        }
        out.sort(Comparator.comparing(Path::toString).reversed());
        return out;
    }

    /** Where the dynamic linker found {@code soname}, from /proc/self/maps (best effort). */
    private static String loadedPath(String soname) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int i = line.indexOf('/');
                if (i >= 0 && line.endsWith(soname)) return line.substring(i);
                if (i >= 0 && line.contains("/" + soname)) return line.substring(i);
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux, or no /proc: the soname is enough
        }
        return soname + " (linker path)";
    }
}
