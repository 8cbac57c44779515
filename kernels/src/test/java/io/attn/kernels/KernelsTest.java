package io.attn.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@link Kernels#ptx} returns NUL-terminated PTX defining exactly the entry points the {@link Kernel} handles name. */
class KernelsTest {
    private static final Pattern ENTRY = Pattern.compile("\\.visible \\.entry (\\w+)\\(");

    @Test
    void ptxIsNulTerminatedAndDefinesTheListedEntries() {
        for (String n : Kernels.NAMES) {
            byte[] b = Kernels.ptx(n);
            assertEquals(0, b[b.length - 1], n + ": last byte must be NUL");
            String text = new String(b, 0, b.length - 1, StandardCharsets.US_ASCII);
            assertEquals(-1, text.indexOf('\0'), n + ": exactly one NUL, at the end");
            assertTrue(text.contains(".version 9.0"), n + ": expected PTX ISA 9.0 (nvcc 13)");
            String target = ".target sm_" + Kernels.minCapability(n);
            assertTrue(text.contains(target + "\n"), n + ": expected " + target);
            java.util.List<String> found = new java.util.ArrayList<>();
            Matcher m = ENTRY.matcher(text);
            while (m.find()) found.add(m.group(1));
            assertEquals(
                    Kernel.in(n).stream().map(Kernel::entry).sorted().toList(),
                    found.stream().sorted().toList(),
                    n + ": entry points");
        }
    }

    @Test
    void tensorCoreFilesUseMmaAndOnlyTheyNeedSm80() {
        byte[] b = Kernels.ptx("flash_attention_bf16");
        String text = new String(b, 0, b.length - 1, StandardCharsets.US_ASCII);
        assertTrue(text.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), "bf16 mma");
        assertTrue(text.contains("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), "fp16 mma");
        byte[] t = Kernels.ptx("flash_attention_tf32");
        String tf32 = new String(t, 0, t.length - 1, StandardCharsets.US_ASCII);
        assertTrue(tf32.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), "tf32 mma");
        assertTrue(tf32.contains("cvt.rna.tf32.f32"), "tf32 rounding");
        assertTrue(tf32.contains("cp.async"), "cp.async");
        byte[] f = Kernels.ptx("flash_attention_fa2");
        String fa2 = new String(f, 0, f.length - 1, StandardCharsets.US_ASCII);
        for (String op : java.util.List.of(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                "cp.async.cg.shared.global",
                "cp.async.wait_group")) assertTrue(fa2.contains(op), "flash_attention_fa2: " + op);
        java.util.Set<String> sm80 =
                java.util.Set.of("flash_attention_bf16", "flash_attention_fa2", "flash_attention_tf32");
        for (String n : Kernels.NAMES) assertEquals(sm80.contains(n) ? "compute_80" : "compute_75", Kernels.arch(n), n);
    }

    @Test
    void unknownNameIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Kernels.ptx("nope"));
    }

    @Test
    void paramsFollowTheCSignatures() {
        // softmax_f32(const float* x, float* y, int H, int L, int S, float scale, int causal, const float* mask,
        //             int maskKind, int maskStrideB, int maskStrideH, const float* kpm, int kpmKind, int winL,
        //             int winR)
        assertEquals(
                java.util.List.of(
                        "u64", "u64", "u32", "u32", "u32", "f32", "u32", "u64", "u32", "u32", "u32", "u64", "u32",
                        "u32", "u32"),
                Kernels.params(Kernel.SOFTMAX_F32));
        // gemm_f32(A, B, C, M, N, K, transA, transB, lda, ldb, ldc, long long strideA, strideB, strideC, batch,
        //          float alpha, float beta)
        assertEquals(
                java.util.List.of(
                        "u64", "u64", "u64", "u32", "u32", "u32", "u32", "u32", "u32", "u32", "u32", "u64", "u64",
                        "u64", "u32", "f32", "f32"),
                Kernels.params(Kernel.GEMM_F32));
        assertEquals(java.util.List.of("u64", "u64", "u64", "u32"), Kernels.params(Kernel.ADD_F32));
        assertEquals(java.util.List.of("u64", "u64", "u32", "f32"), Kernels.params(Kernel.SCALE_F32));
        // the converters f32_to_bf16 / f32_to_f16 (const float* x, uint16* out, long long n)
        assertEquals(java.util.List.of("u64", "u64", "u64"), Kernels.params(Kernel.F32_TO_BF16));
        assertEquals(java.util.List.of("u64", "u64", "u64"), Kernels.params(Kernel.F32_TO_F16));
        // and back, bf16_to_f32 / f16_to_f32 (const uint16* x, float* out, long long n)
        assertEquals(java.util.List.of("u64", "u64", "u64"), Kernels.params(Kernel.BF16_TO_F32));
        assertEquals(java.util.List.of("u64", "u64", "u64"), Kernels.params(Kernel.F16_TO_F32));
        for (Kernel k : Kernel.values()) {
            boolean converter = k == Kernel.F32_TO_BF16
                    || k == Kernel.F32_TO_F16
                    || k == Kernel.BF16_TO_F32
                    || k == Kernel.F16_TO_F32;
            assertTrue(converter || Kernels.params(k).size() >= 4, k.entry());
            assertEquals(Kernels.minCapability(k.file()), k.minCapability(), k.entry());
        }
    }
}
