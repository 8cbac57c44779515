package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.SafeTensors;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wrong weight in a family's own tensors (fused projections, gated feed-forwards, MPNet's relative position bias,
 * Qwen3's q/k norms) is named: one line with the tensor's name, bad input, for a tensor of the wrong shape and for a
 * missing one. The fixtures of {@code tests/families/} with one tensor changed.
 */
class FamilyWeightsTest {
    @TempDir
    static Path dir;

    static Engine engine;

    @BeforeAll
    static void open() {
        engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    /** A family's fixture, the tensor whose shape is changed to {@code shape}, and one that is removed. */
    record Case(String family, String reshaped, int[] shape, String removed) {}

    static final List<Case> CASES = List.of(
            new Case(
                    "gte",
                    "encoder.layer.0.attention.qkv_proj.weight",
                    new int[] {95, 32},
                    "encoder.layer.1.mlp.up_gate_proj.weight"),
            new Case("modernbert", "layers.0.attn.Wqkv.weight", new int[] {96, 31}, "layers.1.mlp.Wi.weight"),
            new Case(
                    "nomic_bert",
                    "encoder.layers.0.attn.Wqkv.weight",
                    new int[] {64, 32},
                    "encoder.layers.1.mlp.fc12.weight"),
            new Case(
                    "mpnet",
                    "encoder.relative_attention_bias.weight",
                    new int[] {31, 4},
                    "encoder.layer.1.attention.attn.q.weight"),
            new Case("qwen3", "layers.0.self_attn.q_norm.weight", new int[] {8}, "layers.1.mlp.gate_proj.weight"),
            new Case(
                    "distilbert",
                    "transformer.layer.0.attention.q_lin.weight",
                    new int[] {32, 31},
                    "transformer.layer.1.ffn.lin1.bias"));

    static Path variant(Case c, String what, java.util.function.Consumer<Map<String, Tensor>> edit) throws IOException {
        Path from = Path.of("../tests/families").resolve(c.family()), to = dir.resolve(c.family() + "-" + what);
        Files.createDirectories(to);
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path q = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(q);
                else if (!p.getFileName().toString().equals("model.safetensors")) Files.copy(p, q);
            }
        }
        Map<String, Tensor> w = new LinkedHashMap<>(
                SafeTensors.read(from.resolve("model.safetensors")).tensors());
        edit.accept(w);
        TinyBert.writeSafetensors(to.resolve("model.safetensors"), w, "F32");
        return to;
    }

    static void named(Path model, String tensor) {
        AttnException e = assertThrows(AttnException.class, () -> {
            try (Embedder ignored = Embedder.load(engine, model)) {
                // loading must fail
            }
        });
        assertTrue(
                e.code() == AttnException.Code.BAD_INPUT || e.code() == AttnException.Code.SHAPE_MISMATCH,
                e.code() + ": " + e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        assertTrue(e.getMessage().contains(tensor), e.getMessage());
    }

    @TestFactory
    Stream<DynamicTest> aWrongOrMissingTensorIsNamed() {
        return CASES.stream()
                .map(c -> DynamicTest.dynamicTest(c.family(), () -> {
                    Path shape = variant(c, "shape", w -> {
                        assertTrue(w.containsKey(c.reshaped()), c.reshaped());
                        w.put(c.reshaped(), Tensor.zeros(c.shape()));
                    });
                    named(shape, c.reshaped());
                    Path missing = variant(c, "missing", w -> assertTrue(w.remove(c.removed()) != null, c.removed()));
                    named(missing, c.removed());
                }));
    }
}
