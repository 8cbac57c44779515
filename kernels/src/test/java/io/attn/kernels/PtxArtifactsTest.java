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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the committed PTX honest. When nvcc and ptxas are installed (no GPU needed): every {@code .cu} recompiles to
 * exactly the committed {@code .ptx} (ignoring the leading {@code //} comment lines, which name the compiler build),
 * and ptxas accepts each committed file for sm_80 and sm_90. Without nvcc the tests abort (reported as skipped). Always:
 * every committed file declares PTX ISA 9.0 or lower, which the R580 driver's JIT reads (a newer nvcc may write a
 * higher version; kernels/build-ptx.sh pins it back and proves with ptxas that the result assembles).
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
                    body(pinIsa(Files.readString(out))),
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

    /** The highest PTX ISA the R580 driver (CUDA 13.0) JIT-compiles, as major * 10 + minor. */
    static final int MAX_ISA = 90;

    @Test
    void committedPtxIsaIsOneThatDriver580Reads() throws IOException {
        for (String n : Kernels.NAMES) {
            int isa = isa(Files.readString(PTX.resolve(n + ".ptx")));
            assertTrue(
                    isa <= MAX_ISA,
                    n + ".ptx declares .version " + isa / 10 + "." + isa % 10 + ", above 9.0, which driver 580 rejects:"
                            + " regenerate with kernels/build-ptx.sh (it pins the version and checks ptxas)");
        }
    }

    @Test
    void isaVersionIsReadAndPinnedAsBuildPtxDoes() {
        assertEquals(90, isa("//\n// Generated\n.version 9.0\n.target sm_75\n"));
        assertEquals(91, isa(".version 9.1\n.target sm_75\n"));
        assertEquals(128, isa(".version 12.8\n"));
        assertEquals(".version 9.0\n.target sm_75\n", pinIsa(".version 9.1\n.target sm_75\n"));
        assertEquals(".version 8.5\n.target sm_75\n", pinIsa(".version 8.5\n.target sm_75\n"));
    }

    /** The {@code .version} a PTX text declares, as major * 10 + minor; fails when it declares none. */
    static int isa(String ptx) {
        Matcher m = Pattern.compile("(?m)^\\.version (\\d+)\\.(\\d+)\\s*$").matcher(ptx);
        assertTrue(m.find(), "no .version line");
        return Integer.parseInt(m.group(1)) * 10 + Integer.parseInt(m.group(2));
    }

    /** What kernels/build-ptx.sh does to nvcc's output: a {@code .version} above 9.0 is rewritten to 9.0. */
    static String pinIsa(String ptx) {
        return isa(ptx) > MAX_ISA ? ptx.replaceFirst("(?m)^\\.version \\d+\\.\\d+", ".version 9.0") : ptx;
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
