package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host emulator's stand-ins for {@code ldmatrix} (.x1 / .x2 / .x4, with and without .trans) and {@code cp.async}
 * checked against the PTX ISA's documented layouts, independently of any kernel: {@code src/test/emu/emu_selftest.cpp}
 * (its header cites the ISA sections) built with {@code emu.cpp} by g++ and run. It also checks that ldmatrix fragments
 * of row-major A, of B stored (n, k) and of B stored (k, n) through .trans feed the mma stand-in the products that
 * flash_attention_fa2.cu relies on. Skipped without g++; a few seconds.
 */
class EmulatorStandInsTest {
    @TempDir
    Path tmp;

    @Test
    void ldmatrixAndCpAsyncFollowThePtxIsa() throws IOException, InterruptedException {
        Path exe = tmp.resolve("emu_selftest");
        List<String> build = List.of(
                "g++",
                "-std=c++20",
                "-O1",
                "-pthread",
                "-w",
                "-DATTN_HOST_EMU",
                "-I",
                KernelEmulator.EMU.toAbsolutePath().toString(),
                KernelEmulator.EMU.resolve("emu.cpp").toAbsolutePath().toString(),
                KernelEmulator.EMU.resolve("emu_selftest.cpp").toAbsolutePath().toString(),
                "-o",
                exe.toString());
        Process p;
        try {
            p = new ProcessBuilder(build).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("g++ not available: " + e.getMessage());
            return;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "g++ timed out");
        assertEquals(0, p.exitValue(), "building emu_selftest failed:\n" + out);
        Process run =
                new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String res = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(run.waitFor(120, TimeUnit.SECONDS), "emu_selftest timed out");
        assertEquals(0, run.exitValue(), res);
        assertTrue(res.strip().startsWith("ok ") && Files.isExecutable(exe), res);
    }
}
