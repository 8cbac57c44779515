package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import io.attn.io.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The golden cases from real PyTorch committed in {@code tests/golden} (written by {@code tools/golden_torch.py} on
 * torch 1.13, CPU): every case on every backend provider, against PyTorch's float64 outputs ({@link GoldenCases}:
 * relative error <= 1e-5). A backend that is not available here is reported as skipped, not passed.
 */
class TorchGoldenTest {
    static final Path GOLDEN = Path.of("golden");

    @Test
    void theCommittedCasesComeFromPyTorchAndCoverEveryModuleKindAndLayout() {
        Map<?, ?> index = (Map<?, ?>) Json.read(GOLDEN.resolve("index.json"));
        assertTrue(String.valueOf(index.get("torch")).startsWith("1.13"), "written by torch " + index.get("torch"));
        List<GoldenCases.Case> cases = GoldenCases.load(GOLDEN);
        assertEquals(43, cases.size(), "cases in tests/golden");
        Set<String> modules = new java.util.TreeSet<>();
        for (GoldenCases.Case c : cases)
            modules.add(String.valueOf(c.indexConfig().get("module")));
        assertEquals(
                Set.of(
                        "MultiheadAttention",
                        "scaled_dot_product_attention",
                        "TransformerEncoderLayer",
                        "TransformerDecoderLayer",
                        "TransformerEncoder",
                        "TransformerDecoder",
                        "Transformer"),
                modules);
        for (String kind : List.of(
                "mha_seqfirst",
                "enc_layer_seqfirst",
                "dec_layer_seqfirst",
                "encoder_seqfirst",
                "decoder_seqfirst",
                "transformer_seqfirst",
                "floatkpm",
                "memory_mask")) assertTrue(cases.stream().anyMatch(c -> c.name().contains(kind)), "no case " + kind);
    }

    @TestFactory
    Stream<DynamicTest> everyCaseOnEveryBackend() {
        List<DynamicTest> tests = new ArrayList<>();
        for (BackendProvider p : Backends.providers())
            for (GoldenCases.Case c : GoldenCases.load(GOLDEN))
                tests.add(DynamicTest.dynamicTest(p.name() + ": " + c.name(), () -> {
                    ProbeResult pr = p.probe();
                    Assumptions.assumeTrue(pr.available(), () -> p.name() + " not available: " + pr.reason());
                    try (Backend b = p.create(BackendOptions.defaults())) {
                        GoldenCases.Result r = GoldenCases.run(c, b);
                        assertTrue(r.pass(), r::message);
                    }
                }));
        assertTrue(!tests.isEmpty(), "no backend provider on the class path");
        return tests.stream();
    }
}
