package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.io.Npy;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GoldenCases} without torch: golden folders in golden_torch.py's format whose expected outputs come from the
 * independent double reference ({@link GoldenFixtures}) must all pass on the CPU backend; a corrupted expected output
 * and every kind of unmappable case must fail with a reason.
 */
class GoldenCasesTest {
    @TempDir
    static Path golden;

    static Backend cpu;

    @BeforeAll
    static void setUp() throws IOException {
        GoldenFixtures.writeAll(golden);
        cpu = Backends.open("cpu", BackendOptions.defaults()).backend();
    }

    @AfterAll
    static void tearDown() {
        cpu.close();
    }

    @Test
    void everyCasePassesOnCpu() {
        List<GoldenCases.Case> cases = GoldenCases.load(golden);
        assertEquals(
                List.of(GoldenFixtures.NAMES),
                cases.stream().map(GoldenCases.Case::name).toList());
        for (GoldenCases.Case c : cases) {
            GoldenCases.Result r = GoldenCases.run(c, cpu);
            assertTrue(r.pass(), c.name() + ": " + r.message());
            assertTrue(r.relErr() < GoldenCases.BOUND, c.name() + " rel err " + r.relErr());
        }
    }

    @Test
    void mhaWeightsAreCompared() {
        var c = find(GoldenCases.load(golden), "mha_cross_perhead_nobias");
        GoldenCases.Result r = GoldenCases.run(c, cpu);
        assertTrue(r.pass(), r.message());
        assertTrue(Files.isRegularFile(c.dir().resolve("out.weights.npy")));
    }

    @Test
    void corruptedExpectedOutputFails(@TempDir Path dir) throws IOException {
        GoldenFixtures.writeAll(dir);
        // one element off by 1% of the largest value: a relative error of ~1e-3, far over the 1e-5 bound
        corrupt(dir.resolve("transformer_post_relu/out.output.npy"));
        corrupt(dir.resolve("mha_cross_perhead_nobias/out.weights.npy"));
        List<GoldenCases.Case> cases = GoldenCases.load(dir);
        GoldenCases.Result t = GoldenCases.run(find(cases, "transformer_post_relu"), cpu);
        assertFalse(t.pass());
        assertTrue(t.message().startsWith("output: relative error"), t.message());
        GoldenCases.Result m = GoldenCases.run(find(cases, "mha_cross_perhead_nobias"), cpu);
        assertFalse(m.pass());
        assertTrue(m.message().startsWith("weights: relative error"), m.message());
        assertTrue(GoldenCases.run(find(cases, "sdpa_boolmask"), cpu).pass()); // the others are untouched
    }

    @Test
    void unmappableCasesFailWithAReason(@TempDir Path dir) throws IOException {
        GoldenWriter w = new GoldenWriter(dir);
        Map<String, Tensor> sd = RandomStateDicts.multiheadAttention(8, true, 1);
        Tensor x = GoldenFixtures.rand(2, 1, 3, 8);
        DTensor out = DTensor.of(x);
        Map<String, Object> fwd = GoldenFixtures.map("need_weights", false, "attn_mask", null);
        Map<String, Object> mha = GoldenFixtures.map(
                "module",
                "MultiheadAttention",
                "embed_dim",
                8L,
                "num_heads",
                2L,
                "bias",
                true,
                "batch_first",
                true,
                "forward",
                fwd);
        Map<String, Tensor> in = GoldenFixtures.map("query", x, "key", x, "value", x);
        w.write("unknown_module", GoldenFixtures.with(mha, "module", "Conv2d"), sd, in, Map.of("output", out));
        w.write(
                "unknown_forward_arg",
                GoldenFixtures.with(mha, "forward", Map.of("foo", true)),
                sd,
                in,
                Map.of("output", out));
        Map<String, Tensor> extra = new LinkedHashMap<>(in);
        extra.put("bogus", x);
        w.write("unused_input", mha, sd, extra, Map.of("output", out));
        w.write(
                "missing_mask_file",
                GoldenFixtures.with(mha, "forward", Map.of("attn_mask", "bool")),
                sd,
                in,
                Map.of("output", out));
        Map<String, Tensor> sdExtra = new LinkedHashMap<>(sd);
        sdExtra.put("bias_k", x);
        w.write("unused_tensor", mha, sdExtra, in, Map.of("output", out));
        w.write("weights_not_requested", mha, sd, in, GoldenFixtures.map("output", out, "weights", out));
        w.write("no_folder", mha, sd, in, Map.of("output", out));
        w.finish();
        deleteTree(dir.resolve("no_folder"));

        Map<String, String> why = new LinkedHashMap<>();
        why.put("unknown_module", "unsupported module \"Conv2d\"");
        why.put("unknown_forward_arg", "unsupported forward argument 'foo'");
        why.put("unused_input", "input 'bogus' is not used");
        why.put("missing_mask_file", "missing in.attn_mask.npy");
        why.put("unused_tensor", "bias_k");
        why.put("weights_not_requested", "output 'weights' is not produced");
        why.put("no_folder", "no folder");
        List<String> seen = new ArrayList<>();
        for (GoldenCases.Case c : GoldenCases.load(dir)) {
            GoldenCases.Result r = GoldenCases.run(c, cpu);
            assertFalse(r.pass(), c.name());
            assertTrue(r.message().contains(why.get(c.name())), c.name() + ": " + r.message());
            seen.add(c.name());
        }
        assertEquals(List.copyOf(why.keySet()), seen);
    }

    @Test
    void missingOrMalformedFolderIsBadInput(@TempDir Path dir) throws IOException {
        assertBadInput(dir.resolve("nope"), "no such directory");
        assertBadInput(dir, "no index.json");
        Files.writeString(dir.resolve("index.json"), "{\"cases\": [");
        assertBadInput(dir, "index.json");
        Files.writeString(dir.resolve("index.json"), "{\"cases\": []}");
        assertBadInput(dir, "no cases");
        Files.writeString(dir.resolve("index.json"), "{\"cases\": [{\"config\": {}}]}");
        assertBadInput(dir, "needs a string \"name\"");
    }

    private static void assertBadInput(Path dir, String text) {
        AttnException e = assertThrows(AttnException.class, () -> GoldenCases.load(dir));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertTrue(e.getMessage().contains(text), e.getMessage());
    }

    private static GoldenCases.Case find(List<GoldenCases.Case> cases, String name) {
        return cases.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static void corrupt(Path npy) throws IOException {
        DTensor d = DTensor.of(Npy.read(npy));
        d.data()[d.size() / 2] += 0.01 * d.maxAbs();
        Files.write(npy, GoldenWriter.npy64(d));
    }

    private static void deleteTree(Path p) throws IOException {
        try (var s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(q);
        }
    }
}
