package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn golden DIR}: the committed PyTorch cases pass on every available backend; a one-case golden folder in golden_torch.py's layout (an SDPA case with a bool mask, the
 * expected output from the double reference, stored as float32 here; the float64 files and every module kind are
 * covered by GoldenCasesTest in the tests module) passes with exit 0; a corrupted expectation fails with exit 1; a
 * missing folder or a filter matching nothing is one line and exit 3.
 */
class GoldenCommandTest {
    @TempDir
    Path dir;

    private Path writeCase(float corruption) throws IOException {
        Tensor q = RandomStateDicts.uniform(1, -1, 1, 1, 2, 3, 4);
        Tensor k = RandomStateDicts.uniform(2, -1, 1, 1, 2, 5, 4);
        Tensor v = RandomStateDicts.uniform(3, -1, 1, 1, 2, 5, 4);
        Tensor mask = Tensor.zeros(1, 2, 3, 5);
        mask.set(1f, 0, 0, 1, 2); // 1 = masked out
        mask.set(1f, 0, 1, 2, 4);
        Tensor want =
                RefAttention.sdpa(q, k, v, mask, true, false, null).output().toTensor();
        want.data()[0] += corruption;
        Map<String, Object> fwd = new LinkedHashMap<>();
        fwd.put("attn_mask", "bool");
        fwd.put("is_causal", false);
        fwd.put("scale", null);
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("module", "scaled_dot_product_attention");
        cfg.put("forward", fwd);
        cfg.put("inputs", List.of("q", "k", "v", "attn_mask"));
        cfg.put("outputs", List.of("output"));
        Path c = Files.createDirectories(dir.resolve("sdpa_boolmask"));
        SafeTensors.write(c.resolve("model.safetensors"), Map.of(), Map.of("config", Json.write(cfg)));
        Npy.write(c.resolve("in.q.npy"), q);
        Npy.write(c.resolve("in.k.npy"), k);
        Npy.write(c.resolve("in.v.npy"), v);
        Npy.write(c.resolve("in.attn_mask.npy"), mask);
        Npy.write(c.resolve("out.output.npy"), want);
        Files.writeString(
                dir.resolve("index.json"),
                Json.write(Map.of("cases", List.of(Map.of("name", "sdpa_boolmask", "config", cfg)))));
        return dir;
    }

    @Test
    void passingCaseExitsZero() throws IOException {
        var r = RunCommandTest.cli("golden", writeCase(0f).toString(), "--device", "cpu");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("sdpa_boolmask"), r.out());
        assertTrue(r.out().contains("PASS"), r.out());
        assertTrue(r.out().strip().endsWith("1 passed, 0 failed"), r.out());
    }

    @Test
    void corruptedCaseExitsOne() throws IOException {
        var r = RunCommandTest.cli("golden", writeCase(0.05f).toString(), "--device", "cpu");
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("FAIL output: relative error"), r.out());
        assertTrue(r.out().strip().endsWith("0 passed, 1 failed"), r.out());
    }

    /** What CI runs: the committed cases from real PyTorch, on every backend (here the CPU; CUDA skipped, not passed). */
    @Test
    void theCommittedPyTorchCasesPassOnEveryAvailableBackend() {
        var r = RunCommandTest.cli("golden", Path.of("..", "tests", "golden").toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("golden: ../tests/golden, 43 cases on cpu"), r.out());
        assertTrue(r.out().contains("transformer_seqfirst_pre_relu"), r.out());
        assertTrue(r.out().lines().noneMatch(l -> l.contains("FAIL")), r.out());
        boolean gpu = io.attn.backend.Backends.probeAll().stream()
                .anyMatch(p -> p.backend().equals("cuda") && p.available());
        assertTrue(r.out().contains(gpu ? "43 cases on cuda" : "skipped (not passed): cuda"), r.out());
        assertTrue(r.out().strip().endsWith((gpu ? 86 : 43) + " passed, 0 failed"), r.out());
    }

    @Test
    void missingFolderOrEmptyFilterIsBadInput() throws IOException {
        var r = RunCommandTest.cli("golden", dir.resolve("nope").toString(), "--device", "cpu");
        assertEquals(3, r.code());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("no such directory"), r.err());
        r = RunCommandTest.cli("golden", writeCase(0f).toString(), "--filter", "transformer");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("no case name contains \"transformer\""), r.err());
    }
}
