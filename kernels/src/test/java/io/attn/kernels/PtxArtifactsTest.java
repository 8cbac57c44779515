package io.attn.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the committed PTX honest. When nvcc and ptxas are installed (no GPU needed): every {@code .cu} recompiles to
 * exactly the committed {@code .ptx} (ignoring the leading {@code //} comment lines, which name the compiler build),
 * and ptxas accepts each committed file for sm_80 and sm_90. Without nvcc the tests abort (reported as skipped).
 */
class PtxArtifactsTest {
    static final Path SRC = Path.of("src/main/cuda");
    static final Path PTX = Path.of("src/main/resources/io/attn/kernels");

    @TempDir
    Path tmp;

    @Test
    void everyCuFileHasCommittedPtxAndANameInKernels() throws IOException {
        List<String> cu;
        try (Stream<Path> s = Files.list(SRC)) {
            cu = s.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".cu"))
                    .map(n -> n.substring(0, n.length() - 3))
                    .sorted()
                    .toList();
        }
        assertEquals(Kernels.NAMES.stream().sorted().toList(), cu, "Kernels.NAMES vs src/main/cuda/*.cu");
        for (String n : cu) assertTrue(Files.exists(PTX.resolve(n + ".ptx")), n + ".ptx is not committed");
    }

    @Test
    void committedPtxMatchesAFreshCompile() throws Exception {
        Path nvcc = tool("nvcc").orElse(null);
        Assumptions.assumeTrue(nvcc != null, "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda/bin): skipped");
        for (String n : Kernels.NAMES) {
            Path out = tmp.resolve(n + ".ptx");
            exec(
                    SRC,
                    nvcc.toString(),
                    "-ptx",
                    "-arch=" + Kernels.arch(n),
                    "-O3",
                    n + ".cu",
                    "-o",
                    out.toAbsolutePath().toString());
            assertEquals(
                    body(Files.readString(PTX.resolve(n + ".ptx"))),
                    body(Files.readString(out)),
                    n + ".ptx is stale: run kernels/build-ptx.sh and commit the result");
        }
    }

    @Test
    void ptxasAcceptsCommittedPtxForSm80AndSm90() throws Exception {
        Path ptxas = tool("ptxas").orElse(null);
        Assumptions.assumeTrue(ptxas != null, "ptxas not found (PATH, CUDA_HOME, /usr/local/cuda/bin): skipped");
        for (String n : Kernels.NAMES)
            for (String arch : List.of("sm_80", "sm_90"))
                exec(
                        PTX,
                        ptxas.toString(),
                        "-arch=" + arch,
                        n + ".ptx",
                        "-o",
                        tmp.resolve(n + "." + arch + ".cubin").toString());
    }

    /** The PTX without its leading comment header (compiler build lines). */
    static String body(String ptx) {
        String[] lines = ptx.split("\n", -1);
        int i = 0;
        while (i < lines.length && (lines[i].startsWith("//") || lines[i].isBlank())) i++;
        return String.join("\n", List.of(lines).subList(i, lines.length));
    }

    static Optional<Path> tool(String name) {
        List<Path> dirs = new ArrayList<>();
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
            if (!d.isEmpty()) dirs.add(Path.of(d));
        for (String env : List.of("CUDA_HOME", "CUDA_PATH")) {
            String v = System.getenv(env);
            if (v != null && !v.isBlank()) dirs.add(Path.of(v, "bin"));
        }
        dirs.add(Path.of("/usr/local/cuda/bin"));
        return dirs.stream()
                .map(d -> d.resolve(name))
                .filter(Files::isExecutable)
                .findFirst();
    }

    static void exec(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), String.join(" ", cmd) + " timed out");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + " failed:\n" + new String(out, StandardCharsets.UTF_8));
    }
}
