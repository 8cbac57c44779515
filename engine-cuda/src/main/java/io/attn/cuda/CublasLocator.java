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
 *   <li>the Python environment first on {@code PATH} (where PyTorch's wheels put cuBLAS): {@code nvidia/cu13/lib} then
 *       {@code nvidia/cublas/lib} under its {@code site-packages}; a {@code bin/} whose parent holds {@code
 *       pyvenv.cfg} is a virtual environment (no process is started), any other {@code python3} is asked for its
 *       {@code site.getsitepackages()};
 *   <li>the dynamic linker's own search ({@code LD_LIBRARY_PATH}, the ldconfig cache, system directories);
 *   <li>{@code $CUDA_HOME} and {@code $CUDA_PATH}: {@code lib64}, {@code lib}, {@code targets/x86_64-linux/lib};
 *   <li>{@code /usr/local/cuda/lib64}, then {@code /usr/local/cuda-*}{@code /lib64}, newest first;
 *   <li>pip wheels ({@code nvidia-cublas-cu13} / {@code -cu12}): {@code nvidia/cublas/lib} (and {@code nvidia/cu13/lib})
 *       under the {@code site-packages} / {@code dist-packages} of {@code $VIRTUAL_ENV}, {@code $CONDA_PREFIX},
 *       {@code ~/.local}, {@code /usr/local}, {@code /usr}, {@code /opt/conda}.
 * </ol>
 *
 * A library counts as found when it loads and exports {@code cublasSgemmStridedBatched}. Before a {@code
 * libcublas.so.N} file is loaded, the {@code libcublasLt.so.N} beside it (if any) is loaded first, so that cuBLAS
 * binds to the Lt of its own directory and not to another version on the linker path. Every place looked is
 * recorded, so "not found" can list them all.
 */
@SuppressWarnings("restricted")
final class CublasLocator {
    static final List<String> SONAMES = List.of("libcublas.so.13", "libcublas.so.12");
    static final String OPTION = "cublas.path", ENV = "ATTN_CUBLAS";

    private CublasLocator() {}

    /**
     * A loaded library: its symbols, soname, its path ({@code where}), which place of the search it came from ({@code
     * source}, e.g. "Python environment /opt/venv, first python3 on PATH"), the {@code libcublasLt} loaded before it from
     * the same directory (or null), and the places tried before it.
     */
    record Found(SymbolLookup symbols, String soname, String where, String source, Path lt, List<String> looked) {}

    /** The outcome: {@code found} is null when nothing loaded; {@code looked} lists every place tried. */
    record Result(Found found, List<String> looked) {
        String notFoundMessage() {
            return "no cuBLAS library found (tried " + String.join("; ", looked) + ")";
        }

        /** The short form, for the backend's one-line description (the probe gives the full list). */
        String notFoundSummary() {
            return "no cuBLAS library found in " + looked.size() + " places (the cuda probe lists them)";
        }

        /**
         * One line for {@code attn probe}: the library used and where it came from, or why none and how to point to
         * one.
         */
        String probeLine() {
            if (found != null)
                return found.where() + " (" + found.source() + ")"
                        + (found.lt() == null ? "" : "; " + found.lt().getFileName() + " from the same directory");
            return "none, so GEMMs take the built-in kernel: no libcublas.so.13 or .so.12 in " + looked.size()
                    + " places (" + String.join("; ", looked) + "); point to one with " + ENV
                    + "=/dir/of/libcublas.so.13 or --backend-opt " + OPTION + "=DIR";
        }
    }

    static Result locate(Map<String, String> extra) {
        return locate(extra, System::getenv, System.getProperty("user.home", ""), CublasLocator::askPython);
    }

    static Result locate(Map<String, String> extra, Function<String, String> env, String home) {
        return locate(extra, env, home, CublasLocator::askPython);
    }

    /**
     * The search; {@code askPython} runs a {@code python3} that is not in a virtual environment and returns the
     * {@code site-packages} directories it reports (tests pass a stand-in).
     */
    static Result locate(
            Map<String, String> extra,
            Function<String, String> env,
            String home,
            Function<Path, List<String>> askPython) {
        List<String> looked = new ArrayList<>();
        Found f = tryExplicit(extra.get(OPTION), "option " + OPTION, looked);
        if (f == null) f = tryExplicit(env.apply(ENV), "env " + ENV, looked);
        if (f != null) return new Result(f, looked);
        PythonEnv py = pythonEnv(env.apply("PATH"), askPython);
        if (py != null) {
            for (Path dir : py.libDirs()) {
                f = tryDir(dir, py.label(), looked);
                if (f != null) return new Result(f, looked);
            }
        } else looked.add("no python3 on PATH");
        for (String so : SONAMES) {
            try {
                SymbolLookup l = SymbolLookup.libraryLookup(so, Arena.global());
                if (l.find("cublasSgemmStridedBatched").isPresent())
                    return new Result(
                            new Found(l, so, loadedPath(so), "the dynamic linker's search", null, List.copyOf(looked)),
                            looked);
                looked.add("linker path: " + so + " lacks cublasSgemmStridedBatched");
            } catch (IllegalArgumentException e) {
                looked.add("linker path (LD_LIBRARY_PATH, ldconfig): " + so + " not found");
            }
        }
        for (Path dir : directories(env, home)) {
            f = tryDir(dir, "a fixed place", looked);
            if (f != null) return new Result(f, looked);
        }
        return new Result(null, looked);
    }

    /**
     * The Python environment whose {@code python3} comes first on {@code PATH}: its {@code site-packages} and the
     * cuBLAS directories of the NVIDIA wheels under them ({@code nvidia/cu13/lib} for CUDA 13, {@code
     * nvidia/cublas/lib} for CUDA 12), in that order.
     */
    record PythonEnv(String label, List<Path> sitePackages) {
        List<Path> libDirs() {
            List<Path> out = new ArrayList<>();
            for (Path sp : sitePackages)
                for (String sub : List.of("nvidia/cu13/lib", "nvidia/cublas/lib")) out.add(sp.resolve(sub));
            return out;
        }
    }

    /** Null when no {@code python3} is on {@code path}. */
    static PythonEnv pythonEnv(String path, Function<Path, List<String>> askPython) {
        if (path == null) return null;
        for (String entry : path.split(":")) {
            if (entry.isBlank()) continue;
            Path bin = Path.of(entry);
            Path exe = bin.resolve("python3");
            if (!Files.isRegularFile(exe) || !Files.isExecutable(exe)) continue;
            Path root = bin.toAbsolutePath().getParent();
            if (root != null && Files.isRegularFile(root.resolve("pyvenv.cfg"))) {
                List<Path> sp = new ArrayList<>();
                for (String lib : List.of("lib", "lib64"))
                    for (Path py : globDirs(root.resolve(lib), "python3*", "site-packages"))
                        if (!sp.contains(py)) sp.add(py);
                return new PythonEnv("Python environment " + root + ", first python3 on PATH", sp);
            }
            List<Path> sp = new ArrayList<>();
            for (String s : askPython.apply(exe)) if (!s.isBlank()) sp.add(Path.of(s.trim()));
            return new PythonEnv("site-packages of " + exe + ", first python3 on PATH", sp);
        }
        return null;
    }

    /** {@code site.getsitepackages()} and the user site of {@code python3}; empty if it fails within 10 s. */
    static List<String> askPython(Path python3) {
        try {
            Process p = new ProcessBuilder(
                            python3.toString(),
                            "-c",
                            "import site\nfor d in getattr(site, 'getsitepackages', lambda: [])()"
                                    + " + [site.getusersitepackages()]: print(d)")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.getOutputStream().close();
            if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) { // a few short lines: the pipe never fills
                p.destroyForcibly();
                return List.of();
            }
            byte[] out = p.getInputStream().readNBytes(64 * 1024);
            return p.exitValue() == 0
                    ? new String(out, java.nio.charset.StandardCharsets.UTF_8)
                            .lines()
                            .toList()
                    : List.of();
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** Tries each entry of a ':'-separated path list; the places it looked are labelled with where it came from. */
    private static Found tryExplicit(String value, String label, List<String> looked) {
        if (value == null || value.isBlank()) return null;
        for (String s : value.split(":")) {
            if (s.isBlank()) continue;
            int before = looked.size();
            Found f = tryPath(Path.of(s.trim()), label, looked);
            if (f != null) return f;
            for (int i = before; i < looked.size(); i++) looked.set(i, label + ": " + looked.get(i));
        }
        return null;
    }

    private static Found tryPath(Path p, String source, List<String> looked) {
        if (Files.isDirectory(p)) return tryDir(p, source, looked);
        if (!Files.exists(p)) {
            looked.add(p + " (does not exist)");
            return null;
        }
        return tryFile(p, source, looked);
    }

    private static Found tryDir(Path dir, String source, List<String> looked) {
        if (!Files.isDirectory(dir)) {
            looked.add(dir + " (no such directory)");
            return null;
        }
        boolean any = false;
        for (String so : SONAMES) {
            Path f = dir.resolve(so);
            if (!Files.exists(f)) continue;
            any = true;
            Found found = tryFile(f, source, looked);
            if (found != null) return found;
        }
        if (!any) looked.add(dir + " (no " + String.join(" or ", SONAMES) + ")");
        return null;
    }

    private static Found tryFile(Path f, String source, List<String> looked) {
        String name = f.getFileName().toString();
        Path lt = null;
        if (name.startsWith("libcublas.")) { // its own libcublasLt first: the soname it needs is then already loaded
            Path sibling = f.resolveSibling("libcublasLt." + name.substring("libcublas.".length()));
            if (Files.exists(sibling)) {
                try {
                    SymbolLookup.libraryLookup(sibling, Arena.global());
                    lt = sibling;
                } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
                    looked.add(sibling + " (failed to load: " + e.getMessage() + ")");
                }
            }
        }
        try {
            SymbolLookup l = SymbolLookup.libraryLookup(f, Arena.global());
            if (l.find("cublasSgemmStridedBatched").isEmpty()) {
                looked.add(f + " (loaded, but lacks cublasSgemmStridedBatched)");
                return null;
            }
            return new Found(l, name, f.toString(), source, lt, List.copyOf(looked));
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
