package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code java.lang.foreign} binding of cuDNN against a real {@code libcudnn.so.9}, without a GPU: the directory
 * holding it comes from the system property {@code attn.test.cudnn} or the environment variable {@code ATTN_CUDNN}
 * (e.g. the {@code nvidia/cudnn/lib} of an unzipped {@code nvidia-cudnn-cu13} wheel); without one every test here is
 * skipped with that reason (CI has no cuDNN). Checked: the library loads and {@code cudnnGetVersion} equals the version
 * in the wheel's own {@code cudnn_version.h} (when {@code ../include} is beside the library); every tensor, pointwise,
 * reduction and matmul descriptor and every operation node of the SDPA graph ({@link CudnnAttention#graph}) finalizes
 * with our enum values and attribute types; and what needs a
 * handle, i.e. a device, fails as one line here: {@code cudnnCreate}. The operation graph, heuristics, plans and
 * execution need that handle (finalizing the operation graph without one makes cuDNN 9.24 load {@code libcublasLt} and,
 * where none loads, abort the process: so {@link FfmCudnn#enginesMissing} checks it first); they are checked by the GPU
 * call (tools/gpu-run.sh).
 */
class FfmCudnnTest {
    static Path dir;
    static FfmCudnn lib;

    @BeforeAll
    static void load() {
        String d = System.getProperty("attn.test.cudnn", System.getenv("ATTN_CUDNN"));
        Assumptions.assumeTrue(
                d != null && Files.isRegularFile(Path.of(d).resolve(FfmCudnn.SONAME)),
                "no cuDNN to test against: set -Dattn.test.cudnn=DIR (or ATTN_CUDNN) to a directory holding "
                        + FfmCudnn.SONAME + ", e.g. nvidia/cudnn/lib of an unzipped nvidia-cudnn-cu13 wheel");
        dir = Path.of(d);
        FfmCudnn.Located found = FfmCudnn.locate(Map.of(FfmCudnn.OPTION, d), k -> null);
        assertNotNull(found.lib(), () -> found.notFound());
        lib = found.lib();
    }

    @Test
    void loadsTheLibraryAndReadsItsVersion() throws IOException {
        assertTrue(lib.version >= FfmCudnn.MIN_VERSION, "cuDNN " + lib.version);
        assertNull(FfmCudnn.versionUnsupported(lib.version));
        assertTrue(lib.where.contains(dir.toString()), lib.where);
        Path header = dir.resolve("../include/cudnn_version.h");
        if (Files.isRegularFile(header)) {
            String h = Files.readString(header);
            long want = 0;
            for (String part : List.of("MAJOR", "MINOR", "PATCHLEVEL")) {
                Matcher m = Pattern.compile("#define CUDNN_" + part + " (\\d+)").matcher(h);
                assertTrue(m.find(), part + " in " + header);
                want = want * 100 + Long.parseLong(m.group(1));
            }
            assertEquals(want, lib.version, "cudnnGetVersion against " + header);
        }
    }

    @Test
    void everyTensorAndOperationOfTheGraphFinalizes() {
        List<CudnnAttention.Key> keys = List.of(
                new CudnnAttention.Key(true, 2, 4, 4, 128, 128, 64, false),
                new CudnnAttention.Key(true, 2, 4, 4, 100, 77, 64, true),
                new CudnnAttention.Key(false, 1, 8, 2, 64, 256, 128, true), // grouped K/V heads
                new CudnnAttention.Key(false, 3, 2, 1, 1, 40, 96, false));
        for (CudnnAttention.Key k : keys) {
            CudnnAttention.Graph g = CudnnAttention.graph(k);
            List<MemorySegment> owned = new ArrayList<>();
            try {
                List<MemorySegment> ops = CudnnAttention.operations(lib, g, owned);
                assertEquals(g.ops().size(), ops.size(), k.toString());
                for (MemorySegment op : ops) assertFalse(op.equals(MemorySegment.NULL));
            } finally {
                for (MemorySegment d : owned.reversed()) lib.destroy(d);
            }
        }
    }

    @Test
    void whatNeedsADeviceFailsAsOneLineHere() {
        Assumptions.assumeTrue(CudaProbe.driverMissing() != null, "a CUDA driver is present: the GPU call checks this");
        AttnException e = assertThrows(AttnException.class, () -> lib.createHandle());
        assertTrue(e.getMessage().startsWith("cuDNN cudnnCreate failed: CUDNN_STATUS"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        // and the backend's path says so in one line, then runs flash
        List<String> notes = new ArrayList<>();
        assertNull(CudnnAttention.open(Map.of(FfmCudnn.OPTION, dir.toString()), k -> null, new RawStream(), notes));
        assertEquals(1, notes.size(), notes.toString());
        // here: libcublasLt / libnvrtc (which cuDNN's engines open, and abort the process without) or the handle
        String note = notes.getFirst();
        assertTrue(note.startsWith("attention=cudnn unavailable, flash runs: "), note);
        assertTrue(note.contains("libcublasLt.so." + lib.cudaMajor) || note.contains("cudnnCreate failed"), note);
        assertFalse(note.contains("\n"));
    }
}
