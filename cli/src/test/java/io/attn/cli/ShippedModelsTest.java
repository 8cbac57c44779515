package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Npy;
import io.attn.parity.GoldenCases;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The small models in {@code examples/models} that README's commands use from a fresh clone: the encoder layer
 * exported from PyTorch (tools/export_torch.py) gives PyTorch's own output on its example input, and the tiny language
 * model (tools/train_tiny_lm.py) continues a rhyme it learnt.
 */
class ShippedModelsTest {
    static final Path MODELS = Path.of("..", "examples", "models");

    @TempDir
    Path dir;

    @Test
    void theExampleEncoderGivesPyTorchsOutput() {
        Path y = dir.resolve("y.npy");
        RunCommandTest.ok(
                "run",
                "--model",
                MODELS.resolve("encoder.safetensors").toString(),
                "--input",
                MODELS.resolve("encoder.input.npy").toString(),
                "--output",
                y.toString());
        double e = GoldenCases.relErr(Npy.read(y), Npy.read(MODELS.resolve("encoder.output.npy")));
        assertTrue(e <= 1e-5, "relative error against PyTorch " + e);
    }

    @Test
    void theTinyLanguageModelContinuesARhyme() {
        var r = RunCommandTest.ok(
                "generate",
                "--model",
                MODELS.resolve("tiny-lm.safetensors").toString(),
                "--vocab",
                MODELS.resolve("tiny-lm.vocab.txt").toString(),
                "--prompt",
                "Twinkle, twinkle",
                "--temperature",
                "0");
        assertEquals("little star , how i wonder what you are .", r.out().strip());
    }

    @Test
    void probeSaysCalmlyWhatIsNotAvailable() {
        var r = RunCommandTest.cli("probe");
        assertEquals(0, r.code(), r.err());
        boolean gpu = r.out().contains("cuda: available");
        if (!gpu && !java.nio.file.Files.exists(Path.of("/dev/nvidiactl")))
            assertTrue(r.out().contains("cuda: not available, no NVIDIA driver (libcuda.so.1 not found)\n"), r.out());
        assertTrue(r.out().contains("cpu: available, Java Vector API"), r.out());
        assertTrue(r.out().strip().endsWith("auto -> " + (gpu ? "cuda" : "cpu")), r.out());
        assertEquals("", r.err());
    }
}
