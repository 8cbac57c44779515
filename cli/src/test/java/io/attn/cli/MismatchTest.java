package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.cpu.CpuBackend;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Request;
import io.attn.engine.Result;
import io.attn.io.Json;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model / config / input mismatches through the library: each is one line naming what is wrong, with the expected and
 * the actual shape; extreme values stay finite; NaN weights are refused, NaN inputs fail or warn as {@code
 * --non-finite} says.
 */
class MismatchTest {
    static final int E = HostileFilesTest.E;

    @TempDir
    Path dir;

    @SuppressWarnings("unchecked")
    static ModelConfig config(String json) {
        return ModelConfig.parse((Map<String, Object>) Json.parse(json), "cfg.json");
    }

    static Model mha() {
        return Model.load(config(HostileFilesTest.mhaConfig(E, 2)), new StateDict(HostileFilesTest.mhaWeights(), "m"));
    }

    static String oneLine(AttnException.Code code, Executable r, String... fragments) {
        AttnException e = assertThrows(AttnException.class, r);
        assertEquals(code, e.code(), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        for (String f : fragments) assertTrue(e.getMessage().contains(f), e.getMessage() + " lacks " + f);
        return e.getMessage();
    }

    @Test
    void stateDictMismatchesNameTheTensorAndBothShapes() {
        ModelConfig c = config(HostileFilesTest.mhaConfig(E, 2));
        Map<String, Tensor> w = HostileFilesTest.mhaWeights();
        w.remove("in_proj_bias");
        oneLine(
                AttnException.Code.SHAPE_MISMATCH,
                () -> Model.load(c, new StateDict(w, "m.safetensors")),
                "m.safetensors",
                "missing tensor 'in_proj_bias'",
                "(24)");
        Map<String, Tensor> x = HostileFilesTest.mhaWeights();
        x.put("out_proj.weight", Tensor.zeros(E, 4));
        oneLine(
                AttnException.Code.SHAPE_MISMATCH,
                () -> Model.load(c, new StateDict(x, "m.safetensors")),
                "'out_proj.weight'",
                "has shape (8, 4)",
                "expected (8, 8)");
        Map<String, Tensor> extra = HostileFilesTest.mhaWeights();
        extra.put("layers.0.norm1.weight", Tensor.zeros(E));
        oneLine(
                AttnException.Code.SHAPE_MISMATCH,
                () -> Model.load(c, new StateDict(extra, "m.safetensors")),
                "unexpected tensor",
                "layers.0.norm1.weight");
        // a config that does not match the file: the first tensor it expects differently is named
        ModelConfig wide = config(HostileFilesTest.mhaConfig(16, 2));
        oneLine(
                AttnException.Code.SHAPE_MISMATCH,
                () -> Model.load(wide, new StateDict(HostileFilesTest.mhaWeights(), "m.safetensors")),
                "'in_proj_weight'",
                "(24, 8)",
                "expected (48, 16)");
    }

    @Test
    void configErrorsAreOneLine() {
        oneLine(
                AttnException.Code.BAD_INPUT,
                () -> config(HostileFilesTest.mhaConfig(10, 3)),
                "embed_dim 10 is not divisible by num_heads 3");
        oneLine(
                AttnException.Code.BAD_INPUT,
                () -> config("{\"module\":\"TransformerEncoderLayer\",\"d_model\":10,\"nhead\":4}"),
                "10",
                "4");
        oneLine(
                AttnException.Code.BAD_INPUT,
                () -> config(HostileFilesTest.mhaConfig(2_000_000_000, 1)),
                "out of range");
        oneLine(
                AttnException.Code.BAD_INPUT,
                () -> config("{\"module\":\"TransformerEncoder\",\"d_model\":8,\"nhead\":2,\"num_layers\":-1}"),
                "num_layers");
    }

    @Test
    void wrongInputsAndMasksAreOneLineAndLeaveTheModelUsable() {
        try (Backend b = new CpuBackend(BackendOptions.defaults());
                Model m = mha()) {
            Tensor x = HostileFilesTest.random(21, 2, 3, E);
            Tensor want =
                    io.attn.engine.internal.ModuleCalls.run(m, b, Request.of(x)).output();
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            m, b, Request.of(HostileFilesTest.random(22, 2, 3, E + 1))),
                    "(2, 3, 9)",
                    "width is 8");
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(m, b, Request.of(Tensor.zeros(3))),
                    "(3)");
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            m, b, Request.of(x).withAttnMask(Tensor.zeros(3, 4), true)),
                    "(3, 4)");
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            m, b, Request.of(x).withAttnMask(Tensor.zeros(5, 3, 3), true)),
                    "(5, 3, 3)",
                    "(B*num_heads, L, S) = (4, 3, 3)");
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            m, b, Request.of(x).withKeyPaddingMask(Tensor.zeros(2, 4))),
                    "(2, 4)",
                    "(2, 3)");
            oneLine(
                    AttnException.Code.SHAPE_MISMATCH,
                    () -> io.attn.engine.internal.ModuleCalls.run(
                            m, b, Request.of(x).withMemory(HostileFilesTest.random(23, 3, 4, E))),
                    "(3, 4, 8)");
            // after all that, the same model gives the same answer
            assertEquals(
                    List.of(want.data().length),
                    List.of(io.attn.engine.internal.ModuleCalls.run(m, b, Request.of(x))
                            .output()
                            .data()
                            .length));
            assertTrue(java.util.Arrays.equals(
                    want.data(),
                    io.attn.engine.internal.ModuleCalls.run(m, b, Request.of(x))
                            .output()
                            .data()));
        }
    }

    @Test
    void extremeScoresAndFullyMaskedRowsStayFinite() {
        try (Backend b = new CpuBackend(BackendOptions.defaults());
                Model m = mha()) {
            Tensor x = HostileFilesTest.random(24, 2, 5, E);
            for (int i = 0; i < x.size(); i++) x.data()[i] *= 1e17f; // q.k ~ 1e33: exp overflows unless max-shifted
            Tensor pad = Tensor.zeros(2, 5);
            for (int j = 0; j < 5; j++) pad.set(1f, 1, j); // batch item 1: every key is padding
            Result r = io.attn.engine.internal.ModuleCalls.run(
                    m, b, Request.of(x).withKeyPaddingMask(pad).withAttentionWeights(AttentionWeights.AVERAGED));
            assertTrue(r.output().allFinite(), "output has NaN/Inf");
            assertEquals(1, r.attentionWeights().size(), "one attention block");
            Tensor w = r.attentionWeights().values().iterator().next();
            assertTrue(w.allFinite(), "weights have NaN/Inf");
            for (int i = 0; i < 5; i++) {
                double rowSum = 0;
                for (int j = 0; j < 5; j++) {
                    rowSum += w.get(0, i, j);
                    assertEquals(0f, w.get(1, i, j), "fully masked row: all-zero weights");
                }
                assertEquals(1.0, rowSum, 1e-5, "row " + i + " sums to 1 (float rounding over 5 terms)");
            }
        }
    }

    @Test
    void nanWeightsAreRefusedAndNanInputsFailOrWarnAsAsked() throws Exception {
        Map<String, Tensor> w = HostileFilesTest.mhaWeights();
        Path good = dir.resolve("good.safetensors");
        io.attn.io.SafeTensors.write(good, w, Map.of("config", HostileFilesTest.mhaConfig(E, 2)));
        w.get("out_proj.weight").data()[0] = Float.NaN;
        Path m = dir.resolve("nan.safetensors");
        io.attn.io.SafeTensors.write(m, w, Map.of("config", HostileFilesTest.mhaConfig(E, 2)));
        Path x = dir.resolve("x.npy");
        io.attn.io.Npy.write(x, HostileFilesTest.random(25, 1, 3, E));
        for (String mode : List.of("error", "warn")) { // weights must be finite either way
            var err = RunCommandTest.cli(
                    "run",
                    "--model",
                    m.toString(),
                    "--input",
                    x.toString(),
                    "--non-finite",
                    mode,
                    "--output",
                    dir.resolve("e.npy").toString());
            assertEquals(Main.EXIT_NON_FINITE, err.code(), err.err());
            assertTrue(
                    err.err().contains("tensor 'out_proj.weight' holds NaN at [0, 0]: weights must be finite"),
                    err.err());
            assertFalse(Files.exists(dir.resolve("e.npy")));
        }
        Tensor nan = HostileFilesTest.random(25, 1, 3, E);
        nan.data()[4] = Float.NaN;
        Path xn = dir.resolve("xn.npy");
        io.attn.io.Npy.write(xn, nan);
        var err = RunCommandTest.cli("run", "--model", good.toString(), "--input", xn.toString());
        assertEquals(Main.EXIT_NON_FINITE, err.code(), err.err());
        assertTrue(err.err().contains("xn.npy: input holds NaN at [0, 0, 4]: inputs must be finite"), err.err());
        var warn = RunCommandTest.cli(
                "run",
                "--model",
                good.toString(),
                "--input",
                xn.toString(),
                "--non-finite",
                "warn",
                "--output",
                dir.resolve("w.npy").toString());
        assertTrue(warn.err().contains("attn: warning: " + xn + ": holds NaN at [0, 0, 4]"), warn.err());
        // the NaN propagates to the output, which --non-finite warn reports too rather than failing
        assertTrue(warn.err().contains("attn: warning: output: holds NaN"), warn.err());
        assertEquals(0, warn.code(), warn.err());
    }
}
