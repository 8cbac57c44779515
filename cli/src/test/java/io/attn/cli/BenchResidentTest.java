package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.KernelBench;
import io.attn.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code attn bench encoder-layer --resident} on the CPU: the JSON line (no {@code device_ms}: the CPU has no device
 * timer), and {@link KernelBench#encoderLayer}'s resident output is the mean over the model dimension of the
 * non-resident one (the same weights and x), which is also what the layer loaded as a model computes.
 */
class BenchResidentTest {
    static final String[] SHAPE = {
        "--batch",
        "2",
        "--seq",
        "5",
        "--d-model",
        "16",
        "--heads",
        "2",
        "--ffn",
        "32",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--warmup-ms",
        "0",
        "--min-ms",
        "0",
        "--min-runs",
        "2"
    };

    @Test
    void encoderLayerResidentPrintsAJsonLine() {
        String[] args = new String[SHAPE.length + 3];
        args[0] = "bench";
        args[1] = "encoder-layer";
        System.arraycopy(SHAPE, 0, args, 2, SHAPE.length);
        args[args.length - 1] = "--resident";
        var r = RunCommandTest.ok(args);
        List<String> lines = r.out().lines().toList();
        String json = lines.getLast();
        assertTrue(json.startsWith("{\"bench\":\"encoder-layer\",\"device\":\"cpu\""), json);
        assertTrue(json.contains("\"shape\":\"B=2 L=5 E=16 H=2 F=32 post-norm relu resident\""), json);
        assertFalse(json.contains("device_ms"), json);
        assertTrue(r.out().contains("bench encoder-layer B=2 L=5 E=16 H=2 F=32 post-norm relu resident on "), r.out());
    }

    @Test
    void residentOutputIsTheMeanOfTheFullOutput() {
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(1));
                KernelBench full = KernelBench.encoderLayer(e, 2, 5, 16, 2, 32, false, "gelu", false);
                KernelBench res = KernelBench.encoderLayer(e, 2, 5, 16, 2, 32, false, "gelu", true)) {
            Tensor y = full.runOutputs().getFirst(), m = res.runOutputs().getFirst();
            assertEquals(List.of(2, 5, 16), dims(y));
            assertEquals(List.of(2, 5), dims(m));
            for (int i = 0; i < 10; i++) {
                double s = 0;
                for (int c = 0; c < 16; c++) s += y.data()[i * 16 + c];
                assertEquals(s / 16, m.data()[i], 1e-5, "row " + i);
            }
            assertEquals(false, res.timesDevice()); // the CPU times its work with the wall clock
            assertTrue(Double.isNaN(res.runTimedOnDevice()));
        }
    }

    private static List<Integer> dims(Tensor t) {
        return java.util.Arrays.stream(t.shape().dims()).boxed().toList();
    }
}
