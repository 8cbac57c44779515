package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cuBLAS search looks in the documented places, in order, and lists every one when nothing loads.
 *
 * <p>Tagged {@code fake-natives}: it loads fake (and, on a GPU host, real) cuBLAS libraries into its JVM, and a process
 * holds one {@code libcublasLt.so.13} per soname, so a later real cuBLAS would bind to a fake Lt and the dynamic linker
 * would end the process (the first GPU run: "undefined symbol: cublasLtCtxInit"). Surefire gives each test class of
 * this module its own JVM, and tools/gpu-run.sh runs these classes in JVMs of their own.
 */
@Tag("fake-natives")
class CublasLocatorTest {
    @TempDir
    Path tmp;

    @Test
    void notFoundListsEveryPlaceInOrder() throws Exception {
        // a directory holding a file named libcublas.so.13 that is not a library: it must fail to load, and the
        // search must go on
        Path bogus = Files.createDirectories(tmp.resolve("bogus"));
        Files.writeString(bogus.resolve("libcublas.so.13"), "not an ELF file");
        Path venv = Files.createDirectories(tmp.resolve("venv/lib/python3.12/site-packages/nvidia/cublas/lib"));
        Map<String, String> env = Map.of(
                "ATTN_CUBLAS", bogus.toString(),
                "CUDA_HOME", "/opt/no-such-cuda",
                "VIRTUAL_ENV", tmp.resolve("venv").toString());
        CublasLocator.Result r =
                CublasLocator.locate(Map.of("cublas.path", "/no/such/libcublas.so.13"), env::get, tmp.toString());
        Assumptions.assumeTrue(r.found() == null, "a real cuBLAS is installed here: " + r.found());
        List<String> looked = r.looked();
        assertEquals("option cublas.path: /no/such/libcublas.so.13 (does not exist)", looked.get(0));
        assertTrue(
                looked.get(1).startsWith("env ATTN_CUBLAS: " + bogus.resolve("libcublas.so.13") + " (failed to load"),
                looked.get(1));
        assertEquals("no python3 on PATH", looked.get(2));
        assertEquals("linker path (LD_LIBRARY_PATH, ldconfig): libcublas.so.13 not found", looked.get(3));
        assertEquals("linker path (LD_LIBRARY_PATH, ldconfig): libcublas.so.12 not found", looked.get(4));
        assertEquals("/opt/no-such-cuda/lib64 (no such directory)", looked.get(5));
        int cudaDir = indexOf(looked, "/usr/local/cuda/lib64 ");
        int wheel = indexOf(looked, venv + " (no libcublas.so.13 or libcublas.so.12)");
        assertTrue(5 < cudaDir && cudaDir < wheel, looked.toString());
        String line = r.probeLine();
        assertTrue(line.startsWith("none, so GEMMs take the built-in kernel: no libcublas.so.13 or .so.12 in "), line);
        assertTrue(
                line.endsWith(
                        "point to one with ATTN_CUBLAS=/dir/of/libcublas.so.13 or --backend-opt" + " cublas.path=DIR"),
                line);
        assertEquals(1, line.lines().count());
        String msg = r.notFoundMessage();
        for (String place : looked) assertTrue(msg.contains(place), place);
    }

    @Test
    void directoriesComeInTheDocumentedOrder() {
        Map<String, String> env = Map.of("CUDA_HOME", "/h", "CUDA_PATH", "/p");
        List<String> dirs = CublasLocator.directories(env::get, "/home/u").stream()
                .map(Path::toString)
                .toList();
        assertEquals(List.of("/h/lib64", "/h/lib", "/h/targets/x86_64-linux/lib", "/p/lib64"), dirs.subList(0, 4));
        assertTrue(dirs.indexOf("/usr/local/cuda/lib64") > dirs.indexOf("/p/targets/x86_64-linux/lib"));
        int wheel = dirs.indexOf("/usr/lib/python3/dist-packages/nvidia/cublas/lib");
        assertTrue(wheel > dirs.indexOf("/usr/local/cuda/lib64"), dirs.toString());
    }

    @Test
    void gemmOptionIsValidatedAndTheProbeNamesAPath() {
        assertThrows(AttnException.class, () -> GemmPaths.mode(Map.of("gemm", "fast")));
        assertEquals("built-in SGEMM kernel (gemm=kernel)", GemmPaths.wouldUse(Map.of("gemm", "kernel")));
        String auto = GemmPaths.wouldUse(Map.of());
        assertTrue(
                auto.startsWith("cuBLAS")
                        || auto.startsWith("built-in SGEMM kernel, because no cuBLAS library found (tried"),
                auto);
    }

    /**
     * A fake venv as PyTorch's CUDA 13 wheels lay it out, first on PATH: {@code bin/python3}, {@code pyvenv.cfg}, and
     * {@code lib/python3.12/site-packages/nvidia/cu13/lib} holding {@code libcublas.so.13}, which needs the {@code
     * libcublasLt.so.13} beside it (no RPATH, not on the linker path: it loads only if its Lt was loaded first).
     */
    @Test
    void theVenvFirstOnPathComesBeforeTheLinkerAndItsLtIsLoadedFirst() throws Exception {
        Path venv = tmp.resolve("venv");
        Path lib = Files.createDirectories(venv.resolve("lib/python3.12/site-packages/nvidia/cu13/lib"));
        plantCublas(lib, "13");
        Path bin = Files.createDirectories(venv.resolve("bin"));
        Files.writeString(venv.resolve("pyvenv.cfg"), "home = /usr/bin\n");
        executable(bin.resolve("python3"), "#!/bin/sh\nexit 1\n");
        Map<String, String> env = Map.of("PATH", bin + ":/usr/bin:/bin");
        CublasLocator.Result r = CublasLocator.locate(Map.of(), env::get, tmp.toString(), py -> {
            throw new AssertionError("a venv is read from its layout, not by running " + py);
        });
        assertTrue(r.found() != null, r.notFoundMessage());
        assertEquals(lib.resolve("libcublas.so.13").toString(), r.found().where());
        assertEquals(lib.resolve("libcublasLt.so.13"), r.found().lt());
        assertEquals(
                "Python environment " + venv + ", first python3 on PATH",
                r.found().source());
        assertEquals(
                lib.resolve("libcublas.so.13") + " (Python environment " + venv + ", first python3 on PATH);"
                        + " libcublasLt.so.13 from the same directory",
                r.probeLine());
        // the fake cuBLAS really calls into the Lt it was linked with
        assertTrue(r.found().symbols().find("cublasSgemmStridedBatched").isPresent());
    }

    /** A python3 first on PATH that is no venv (a conda or system Python) is asked for its site-packages. */
    @Test
    void anotherPython3IsAskedForItsSitePackages() throws Exception {
        Path site = tmp.resolve("conda/lib/python3.11/site-packages");
        Path lib = Files.createDirectories(site.resolve("nvidia/cublas/lib"));
        plantCublas(lib, "12");
        Path bin = Files.createDirectories(tmp.resolve("conda/bin"));
        // a stand-in python3 that answers as `python3 -c 'import site; ...'` does: one directory per line
        executable(bin.resolve("python3"), "#!/bin/sh\necho " + tmp.resolve("nowhere") + "\necho " + site + "\n");
        Map<String, String> env = Map.of("PATH", "/no/such/dir:" + bin);
        CublasLocator.Result r = CublasLocator.locate(Map.of(), env::get, tmp.toString());
        assertTrue(r.found() != null, r.notFoundMessage());
        assertEquals(lib.resolve("libcublas.so.12").toString(), r.found().where());
        assertEquals(
                "site-packages of " + bin.resolve("python3") + ", first python3 on PATH",
                r.found().source());
        assertTrue(
                r.found().looked().contains(tmp.resolve("nowhere/nvidia/cu13/lib") + " (no such directory)"),
                r.found().looked().toString());
    }

    @Test
    void anExplicitPathStillWinsOverTheVenv() throws Exception {
        Path venv = tmp.resolve("venv");
        plantCublas(Files.createDirectories(venv.resolve("lib/python3.12/site-packages/nvidia/cu13/lib")), "13");
        Path bin = Files.createDirectories(venv.resolve("bin"));
        Files.writeString(venv.resolve("pyvenv.cfg"), "");
        executable(bin.resolve("python3"), "#!/bin/sh\nexit 1\n");
        Path mine = Files.createDirectories(tmp.resolve("mine"));
        plantCublas(mine, "13");
        Map<String, String> env = Map.of("PATH", bin.toString(), "ATTN_CUBLAS", mine.toString());
        CublasLocator.Result r = CublasLocator.locate(Map.of(), env::get, tmp.toString());
        assertEquals(mine.resolve("libcublas.so.13").toString(), r.found().where());
        assertEquals("env ATTN_CUBLAS", r.found().source());
    }

    /** Builds {@code libcublasLt.so.N} (with its soname) and {@code libcublas.so.N} linked against it in {@code dir}. */
    static void plantCublas(Path dir, String major) throws Exception {
        Path lt = dir.resolve("libcublasLt.so." + major);
        Path src = Files.writeString(dir.resolve("lt.c"), "int fakeLtMatmul(int x) { return x + 1; }\n");
        cc(dir, "-shared", "-fPIC", "-Wl,-soname,libcublasLt.so." + major, "-o", lt.toString(), src.toString());
        Path csrc = Files.writeString(
                dir.resolve("cublas.c"),
                "int fakeLtMatmul(int);\nint cublasSgemmStridedBatched(void) { return fakeLtMatmul(-1); }\n");
        cc(
                dir,
                "-shared",
                "-fPIC",
                "-o",
                dir.resolve("libcublas.so." + major).toString(),
                csrc.toString(),
                "-L" + dir,
                "-l:libcublasLt.so." + major);
        Files.delete(src);
        Files.delete(csrc);
    }

    static void cc(Path dir, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("cc"));
        cmd.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no C compiler (cc) to build a fake cuBLAS: " + e.getMessage());
            return;
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "cc timed out");
        assertEquals(0, p.exitValue(), out);
    }

    static void executable(Path f, String text) throws Exception {
        Files.writeString(f, text);
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static int indexOf(List<String> looked, String prefix) {
        for (int i = 0; i < looked.size(); i++) if (looked.get(i).startsWith(prefix)) return i;
        throw new AssertionError("no entry starting with '" + prefix + "' in " + looked);
    }
}
