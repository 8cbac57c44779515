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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cuBLAS search looks in the documented places, in order, and lists every one when nothing loads. */
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
        assertEquals("linker path (LD_LIBRARY_PATH, ldconfig): libcublas.so.13 not found", looked.get(2));
        assertEquals("linker path (LD_LIBRARY_PATH, ldconfig): libcublas.so.12 not found", looked.get(3));
        assertEquals("/opt/no-such-cuda/lib64 (no such directory)", looked.get(4));
        int cudaDir = indexOf(looked, "/usr/local/cuda/lib64 ");
        int wheel = indexOf(looked, venv + " (no libcublas.so.13 or libcublas.so.12)");
        assertTrue(4 < cudaDir && cudaDir < wheel, looked.toString());
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

    private static int indexOf(List<String> looked, String prefix) {
        for (int i = 0; i < looked.size(); i++) if (looked.get(i).startsWith(prefix)) return i;
        throw new AssertionError("no entry starting with '" + prefix + "' in " + looked);
    }
}
