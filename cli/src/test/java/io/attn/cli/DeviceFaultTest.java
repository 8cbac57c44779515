package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.io.Npy;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Device faults through {@code attn run}, with the test-only {@link FaultyBackendProvider}: with {@code --device auto}
 * a device out-of-memory or lost device falls back to the CPU with a warning and gives exactly the CPU's result; with
 * the device named explicitly it is one clear error (exit 5 / 4) naming the size asked and free, and no output file.
 */
class DeviceFaultTest {
    @TempDir
    Path dir;

    @AfterEach
    void off() {
        System.clearProperty(FaultyBackendProvider.MODE);
        System.clearProperty(FaultyBackendProvider.LIMIT);
    }

    Path model() {
        Path p = dir.resolve("m.safetensors");
        io.attn.io.SafeTensors.write(
                p, HostileFilesTest.mhaWeights(), Map.of("config", HostileFilesTest.mhaConfig(HostileFilesTest.E, 2)));
        return p;
    }

    Path input() {
        Path p = dir.resolve("x.npy");
        Npy.write(p, HostileFilesTest.random(11, 2, 5, HostileFilesTest.E));
        return p;
    }

    static List<String> errLines(String err) {
        return HostileFilesTest.errorLines(err);
    }

    @Test
    void autoFallsBackToTheCpuOnDeviceOutOfMemory() {
        Path m = model(), x = input();
        var cpu = RunCommandTest.cli(
                "run",
                "--model",
                m.toString(),
                "--input",
                x.toString(),
                "--device",
                "cpu",
                "--output",
                dir.resolve("cpu.npy").toString());
        assertEquals(0, cpu.code(), cpu.err());

        System.setProperty(FaultyBackendProvider.MODE, "oom");
        var r = RunCommandTest.cli(
                "run",
                "--model",
                m.toString(),
                "--input",
                x.toString(),
                "--device",
                "auto",
                "--output",
                dir.resolve("auto.npy").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("attn: device auto: faulty"), r.err());
        assertTrue(r.err().contains("attn: warning: faulty failed ("), r.err());
        assertTrue(r.err().contains("fake device out of memory: asked "), r.err());
        assertTrue(r.err().contains("falling back to the CPU"), r.err());
        assertArrayEquals(
                Npy.read(dir.resolve("cpu.npy")).data(),
                Npy.read(dir.resolve("auto.npy")).data(),
                "same as the CPU");
    }

    @Test
    void autoFallsBackToTheCpuWhenTheDeviceIsLost() {
        System.setProperty(FaultyBackendProvider.MODE, "lost");
        var r = RunCommandTest.cli(
                "run",
                "--model",
                model().toString(),
                "--input",
                input().toString(),
                "--output",
                dir.resolve("y.npy").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("faulty failed (") && r.err().contains("fake device lost"), r.err());
        assertTrue(Files.exists(dir.resolve("y.npy")));
    }

    @Test
    void aNamedDeviceOutOfMemoryIsOneClearLineAndNoOutput() throws Exception {
        System.setProperty(FaultyBackendProvider.MODE, "oom");
        System.setProperty(FaultyBackendProvider.LIMIT, "20");
        var r = RunCommandTest.cli(
                "run",
                "--model",
                model().toString(),
                "--input",
                input().toString(),
                "--device",
                "faulty",
                "--output",
                dir.resolve("y.npy").toString());
        assertEquals(Main.EXIT_OOM, r.code(), r.err());
        List<String> lines = errLines(r.err());
        assertEquals(1, lines.size(), r.err());
        assertTrue(
                lines.get(0).matches("attn: .*x\\.npy: fake device out of memory: asked \\d+ bytes, 80 bytes free"),
                lines.get(0));
        assertFalse(r.err().contains("Exception"), r.err());
        try (var s = Files.list(dir)) {
            assertEquals(
                    List.of("m.safetensors", "x.npy"),
                    s.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    @Test
    void aFailedRequestLeavesTheModelUsable() throws Exception {
        // the fake device takes buffers of up to 4000 floats: a (1, 3, E) request fits, a (1, 600, E) one does not
        System.setProperty(FaultyBackendProvider.MODE, "oom");
        System.setProperty(FaultyBackendProvider.LIMIT, "4000");
        Tensor small = HostileFilesTest.random(12, 1, 3, HostileFilesTest.E);
        Tensor big = HostileFilesTest.random(13, 1, 600, HostileFilesTest.E);
        Tensor narrow = HostileFilesTest.random(14, 1, 3, HostileFilesTest.E - 1);
        Path m = model();
        float[] want;
        try (Backend cpu = new io.attn.cpu.CpuBackend(BackendOptions.defaults());
                io.attn.nn.Model fresh = io.attn.nn.Model.load(m, null)) {
            want = io.attn.engine.internal.ModuleCalls.run(fresh, cpu, io.attn.engine.Request.of(small))
                    .output()
                    .data();
        }
        var dev = (FaultyBackendProvider.Faulty) new FaultyBackendProvider().create(BackendOptions.defaults());
        try (dev;
                io.attn.nn.Model model = io.attn.nn.Model.load(m, null)) {
            var oom = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class,
                    () -> io.attn.engine.internal.ModuleCalls.run(model, dev, io.attn.engine.Request.of(big)));
            assertEquals(io.attn.AttnException.Code.DEVICE_OUT_OF_MEMORY, oom.code(), oom.getMessage());
            // the query uploads, then the memory does not fit: the query's buffer must be given back
            var oom2 = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            model, dev, io.attn.engine.Request.of(small).withMemory(big)));
            assertEquals(io.attn.AttnException.Code.DEVICE_OUT_OF_MEMORY, oom2.code(), oom2.getMessage());
            var shape = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class,
                    () -> io.attn.engine.internal.ModuleCalls.run(model, dev, io.attn.engine.Request.of(narrow)));
            assertEquals(io.attn.AttnException.Code.SHAPE_MISMATCH, shape.code(), shape.getMessage());
            // the same model and device, right after both failures, give exactly the CPU's answer (same kernels)
            assertArrayEquals(
                    want,
                    io.attn.engine.internal.ModuleCalls.run(model, dev, io.attn.engine.Request.of(small))
                            .output()
                            .data());
            assertArrayEquals(
                    want,
                    io.attn.engine.internal.ModuleCalls.run(model, dev, io.attn.engine.Request.of(small))
                            .output()
                            .data());
            var again = org.junit.jupiter.api.Assertions.assertThrows(
                    io.attn.AttnException.class,
                    () -> io.attn.engine.internal.ModuleCalls.run(model, dev, io.attn.engine.Request.of(big)));
            assertEquals(io.attn.AttnException.Code.DEVICE_OUT_OF_MEMORY, again.code());
            model.close(); // releases every cached executor's buffers
            assertEquals(0, dev.live.get(), "device buffers leaked by the failed runs");
        }
    }
}
