package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import io.attn.graph.Op;
import io.attn.kernels.Kernel;
import io.attn.parity.ParityCase;
import io.attn.parity.ParityCases;
import io.attn.parity.ParityHarness;
import io.attn.parity.ParityResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The 3xTF32 flash kernels ({@code flash_attention_tf32.cu}) without a GPU: the emulator's tf32 stand-ins checked
 * against the PTX ISA ({@code src/test/emu/tf32_check.cpp}), every tf32x3 entry on the parity suite's attention tile
 * cases of its head dim (every mask kind, causal with L > S and S > L, fully masked rows, tails, B*H > 1) held to the
 * fp32 bound, and the planted bug: 1xTF32 (the correction products dropped) must fail that bound. The default entries
 * (the fp32 default on sm_80+, {@link Attention#tf32Kernel}) also run on every attention case in the parity suite
 * (ParityTest's emulated default target).
 */
class FlashTf32EmulatedTest {
    @Test
    void standInsFollowThePtxIsa() throws Exception {
        Path dir = Files.createTempDirectory("attn-tf32-check");
        Path exe = dir.resolve("tf32_check");
        List<String> cmd = List.of(
                "g++",
                "-std=c++20",
                "-O1",
                "-pthread",
                "-I",
                KernelEmulator.EMU.toAbsolutePath().toString(),
                "-o",
                exe.toString(),
                KernelEmulator.EMU.resolve("tf32_check.cpp").toAbsolutePath().toString(),
                KernelEmulator.EMU.resolve("emu.cpp").toAbsolutePath().toString());
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no g++: " + e.getMessage());
            return;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "compiling tf32_check.cpp:\n" + out);
        Process run =
                new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String res = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(run.waitFor(60, TimeUnit.SECONDS), "tf32_check hangs");
        assertEquals(0, run.exitValue(), res);
        assertTrue(res.startsWith("ok "), res);
    }

    @Test
    void entryNamesGiveTheLaunchGeometry() {
        assertEquals(10, Attention.TF32_KERNELS.size());
        for (Kernel k : Attention.TF32_KERNELS) {
            assertEquals(2 * Attention.tf32Rows(k), Attention.tf32Threads(k), k + ": 16 query rows per warp");
            assertTrue(List.of(32, 64, 128).contains(Attention.tf32Dim(k)), k.toString());
            assertEquals(80, k.minCapability(), k.toString());
        }
    }

    private static final String[] NON_DEFAULT = {
        "tf32x3_d32_br128_w8_bc64", "tf32x3_d64_br128_w8_bc64", "tf32x3_d64_br64_w4_bc32", "tf32x3_d128_br64_w4_bc32"
    };

    /** The entries the dispatch does not pick by default (the defaults run in ParityTest) on their D's tile cases. */
    @Tag("long")
    @Test
    void everyTf32x3EntryMeetsTheFp32BoundOnTheTileCases() {
        List<String> report = new ArrayList<>();
        for (String entry : NON_DEFAULT) {
            Kernel k = kernel(entry);
            for (ParityResult r : runTiles(entry, Attention.tf32Dim(k), k)) {
                report.add(entry + " " + r.parityCase().name() + ": " + r.relErr());
                assertTrue(r.pass(), entry + " " + r.parityCase().name() + ": " + r.message());
            }
        }
        System.out.println("tf32x3 tile cases, relative error (bound 1e-5):\n  " + String.join("\n  ", report));
    }

    /** Planted bug: plain TF32 (no correction products) is ~1e-4 off, so the fp32 bound must reject it. */
    @Tag("long")
    @Test
    void oneTf32FailsTheFp32Bound() {
        int failed = 0, cases = 0;
        for (ParityResult r : runTiles("tf32x1_d64_br64_w4_bc64", 64, kernel("tf32x1_d64_br64_w4_bc64"))) {
            cases++;
            if (!r.pass()) failed++;
            System.out.println("tf32x1 " + r.parityCase().name() + ": " + r.relErr() + " pass=" + r.pass());
            assertTrue(r.relErr() > 1e-5 || r.relErr() == 0, r.parityCase().name() + ": " + r.relErr());
        }
        assertTrue(cases > 0);
        assertEquals(cases, failed, "1xTF32 must fail the fp32 bound on every tile case");
    }

    /** Every tile case for every entry (-Dattn.test.allVariantCases=true), else the first three per entry. */
    static final boolean ALL_CASES = Boolean.getBoolean("attn.test.allVariantCases");

    private static Kernel kernel(String entry) {
        return Attention.TF32_KERNELS.stream()
                .filter(k -> k.entry().equals(entry))
                .findFirst()
                .orElseThrow();
    }

    private static List<ParityResult> runTiles(String entry, int d, Kernel expected) {
        String why = EmulatedCuda.unavailable();
        Assumptions.assumeTrue(why == null, why);
        EmuSink sink = new EmuSink(KernelEmulator.get());
        var backend = new CudaBackend(
                sink, new KernelGemm(sink), Map.of(Attention.FP32_VARIANT_OPTION, entry), Precision.FP32, 80);
        List<ParityResult> out = new ArrayList<>();
        try {
            int taken = 0;
            for (ParityCase c : ParityCases.all()) {
                if (c.op() != Op.ATTENTION
                        || !c.name().startsWith("attention tiles")
                        || !c.name().endsWith(" D" + d)) continue;
                // CI: the first three tile cases of the head dim (every entry under emulation adds up; the
                // defaults run every case in ParityTest, and the 2026-11-27 GPU sweep judged every entry on the
                // device); -Dattn.test.allVariantCases=true: every tile case
                if (!ALL_CASES && taken++ >= 3) break;
                sink.launched.clear();
                out.add(ParityHarness.run(c, backend));
                assertTrue(
                        sink.launched.contains(expected), c.name() + ": " + entry + " did not run: " + sink.launched);
            }
        } finally {
            backend.close();
        }
        assertFalse(out.isEmpty(), "no tile cases for D" + d);
        return out;
    }
}
