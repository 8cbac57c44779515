package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.kernels.Kernel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code attention=cudnn} without a GPU: the cases it takes ({@link CudnnAttention#unsupported}), the graph's
 * parameters against the ATTENTION op's ({@link CudnnAttention#graph}: shapes, strides that address the engine's
 * row-major q, k, v, o, the scale and -inf as by-value scalars, the causal rule as GEN_INDEX / CMP_GE / BINARY_SELECT,
 * the softmax chain), the scratch plan, and the fallback: no library, or no device, gives the flash path's launches and
 * one line in the backend description. Running the graph needs a device: the GPU call (tools/gpu-run.sh) does it.
 */
class CudnnAttentionTest {
    static Node attention(int b, int h, int hkv, int l, int s, int d, MaskSpec mask) {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", b, h, l, d), k = g.input("k", b, hkv, s, d), v = g.input("v", b, hkv, s, d);
        Node m = mask.attnMask() != MaskKind.NONE ? g.input("m", l, s) : null;
        Node kpm = mask.keyPadding() != MaskKind.NONE ? g.input("kpm", b, s) : null;
        return g.build(g.attention(q, k, v, 0.125f, mask, m, kpm)).nodes().getLast();
    }

    @Test
    void takesSixteenBitAttentionWithoutMasksOrCausal() {
        Node plain = attention(2, 8, 2, 100, 77, 64, MaskSpec.NONE);
        assertNull(CudnnAttention.unsupported(Precision.BF16, 90, plain));
        assertNull(CudnnAttention.unsupported(Precision.BF16, 80, attention(1, 2, 2, 5, 5, 96, MaskSpec.CAUSAL)));
        assertNull(CudnnAttention.unsupported(Precision.FP16, 80, attention(1, 2, 2, 5, 5, 128, MaskSpec.CAUSAL)));
        assertTrue(CudnnAttention.unsupported(Precision.FP16, 80, attention(1, 2, 2, 5, 5, 96, MaskSpec.CAUSAL))
                .startsWith("head dim 96 at fp16"));
        assertTrue(CudnnAttention.unsupported(Precision.FP32, 90, plain).startsWith("precision fp32"));
        assertTrue(CudnnAttention.unsupported(Precision.TF32, 90, plain).startsWith("precision tf32"));
        assertTrue(CudnnAttention.unsupported(Precision.BF16, 75, plain).startsWith("compute capability 7.5"));
        assertTrue(CudnnAttention.unsupported(Precision.BF16, 90, attention(1, 2, 2, 5, 5, 136, MaskSpec.NONE))
                .startsWith("head dim 136"));
        assertTrue(CudnnAttention.unsupported(Precision.BF16, 90, attention(1, 2, 2, 5, 5, 60, MaskSpec.NONE))
                .startsWith("head dim 60"));
        assertTrue(CudnnAttention.unsupported(
                        Precision.BF16,
                        90,
                        attention(1, 2, 2, 5, 5, 64, new MaskSpec(false, MaskKind.ADDITIVE, MaskKind.NONE)))
                .contains("attention mask"));
        assertTrue(CudnnAttention.unsupported(
                        Precision.BF16,
                        90,
                        attention(1, 2, 2, 5, 5, 64, new MaskSpec(true, MaskKind.NONE, MaskKind.BOOL)))
                .contains("key-padding"));
        assertTrue(CudnnAttention.unsupported(
                        Precision.BF16, 90, attention(1, 2, 2, 5, 5, 64, MaskSpec.CAUSAL.window(3, 0)))
                .contains("sliding window"));
    }

    @Test
    void theGraphIsBuiltFromTheOpsParameters() {
        Node n = attention(2, 8, 2, 100, 77, 64, MaskSpec.CAUSAL);
        CudnnAttention.Key k = CudnnAttention.key(Precision.BF16, n);
        assertEquals(new CudnnAttention.Key(true, 2, 8, 2, 100, 77, 64, true), k);
        assertFalse(CudnnAttention.key(Precision.FP16, attention(1, 2, 2, 3, 3, 64, MaskSpec.NONE))
                .bf16());
        CudnnAttention.Graph g = CudnnAttention.graph(k);
        // every tensor's strides address the engine's row-major buffers: element (i0, i1, i2, i3) at the offset the
        // (B, H, L, D) / (B, Hkv, S, D) layout gives it; K is read transposed, (b, h, i, j) = k[b][h][j][i]
        CudnnAttention.TensorSpec q = g.tensor(CudnnAttention.UID_Q),
                kt = g.tensor(CudnnAttention.UID_K),
                v = g.tensor(CudnnAttention.UID_V),
                o = g.tensor(CudnnAttention.UID_O);
        assertEquals(List.of(2L, 8L, 100L, 64L), box(q.dims()));
        assertEquals(List.of(2L, 2L, 64L, 77L), box(kt.dims()));
        assertEquals(List.of(2L, 2L, 77L, 64L), box(v.dims()));
        assertEquals(box(q.dims()), box(o.dims()));
        for (long[] at : new long[][] {{1, 7, 99, 63}, {0, 3, 10, 5}})
            assertEquals(((at[0] * 8 + at[1]) * 100 + at[2]) * 64 + at[3], offset(q, at));
        for (long[] at : new long[][] {{1, 1, 63, 76}, {0, 1, 5, 10}}) // (b, hkv, i over D, j over S)
        assertEquals(((at[0] * 2 + at[1]) * 77 + at[3]) * 64 + at[2], offset(kt, at));
        assertEquals(((1L * 2 + 1) * 77 + 76) * 64 + 63, offset(v, new long[] {1, 1, 76, 63}));
        for (var t : List.of(q, kt, v, o)) {
            assertEquals(FfmCudnn.DATA_BFLOAT16, t.dtype());
            assertFalse(t.virtual() || t.byValue());
        }
        CudnnAttention.TensorSpec scale = g.tensor(CudnnAttention.UID_SCALE),
                inf = g.tensor(CudnnAttention.UID_NEG_INF);
        assertTrue(scale.byValue() && inf.byValue() && scale.dtype() == FfmCudnn.DATA_FLOAT);
        // the chain: QK^T, * scale, causal (row >= col keeps), softmax, P V
        List<String> chain = g.ops().stream().map(CudnnAttentionTest::name).toList();
        assertEquals(
                List.of(
                        "matmul", "pw1", "pw501", "pw501", "pw303", "pw601", "red3", "pw9", "pw13", "red0", "pw6",
                        "matmul"),
                chain);
        var gen = (CudnnAttention.PointwiseOp) g.ops().get(2);
        var gen2 = (CudnnAttention.PointwiseOp) g.ops().get(3);
        var cmp = (CudnnAttention.PointwiseOp) g.ops().get(4);
        assertEquals(2, gen.axis()); // rows: query index i
        assertEquals(3, gen2.axis()); // columns: key index j
        assertEquals(gen.y(), cmp.x()); // i >= j: key j visible to query i (top-left causal, the engine's rule)
        assertEquals(gen2.y(), cmp.b());
        var select = (CudnnAttention.PointwiseOp) g.ops().get(5);
        assertEquals(CudnnAttention.UID_NEG_INF, select.b());
        assertEquals(cmp.y(), select.t());
        var mul = (CudnnAttention.PointwiseOp) g.ops().get(1);
        assertEquals(CudnnAttention.UID_SCALE, mul.b());
        var last = (CudnnAttention.MatmulOp) g.ops().getLast();
        assertEquals(CudnnAttention.UID_V, last.b());
        assertEquals(CudnnAttention.UID_O, last.c());
        assertEquals(FfmCudnn.DATA_BFLOAT16, g.tensor(last.a()).dtype()); // probabilities in 16 bits for P V
        // no causal: no mask ops and no -inf scalar
        CudnnAttention.Graph plain = CudnnAttention.graph(new CudnnAttention.Key(false, 1, 2, 2, 4, 4, 64, false));
        assertEquals(8, plain.ops().size());
        assertTrue(plain.tensors().stream().noneMatch(t -> t.uid() == CudnnAttention.UID_NEG_INF));
        assertEquals(FfmCudnn.DATA_HALF, plain.tensor(CudnnAttention.UID_Q).dtype());
        assertEquals(Float.NEGATIVE_INFINITY, CudnnAttention.negativeInfinity(92400));
        assertEquals(-Float.MAX_VALUE, CudnnAttention.negativeInfinity(90100));
    }

    @Test
    void scratchHoldsTheSixteenBitQkvAndO() {
        Node n = attention(2, 8, 2, 100, 77, 64, MaskSpec.NONE);
        long want = 2L * 64 * (2 * 8 * 100 + 2 * 2 * 77) / 2; // halves of q, o (B,H,L,D) and k, v (B,Hkv,S,D)
        assertEquals(want, CudnnAttention.scratch(n));
        assertEquals(want, Attention.scratch(Attention.Path.CUDNN, Precision.BF16, 90, null, n));
        // a case cuDNN declines plans what the flash path needs
        Node masked = attention(2, 8, 2, 100, 77, 64, new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE));
        assertEquals(
                Attention.scratch(Attention.Path.FLASH, Precision.BF16, 90, null, masked),
                Attention.scratch(Attention.Path.CUDNN, Precision.BF16, 90, null, masked));
        assertEquals(
                Attention.scratch(Attention.Path.FLASH, Precision.FP32, 90, null, n),
                Attention.scratch(Attention.Path.CUDNN, Precision.FP32, 90, null, n));
    }

    @Test
    void noLibraryMeansOneLineAndTheFlashPath() {
        List<String> notes = new ArrayList<>();
        Map<String, String> env = Map.of(FfmCudnn.ENV, "/nonexistent", "PATH", "");
        assertNull(CudnnAttention.open(Map.of(), env::get, new RawStream(), notes));
        assertEquals(1, notes.size());
        String note = notes.getFirst();
        assertTrue(note.startsWith("attention=cudnn unavailable, flash runs: "), note);
        assertFalse(note.contains("\n"));
        // either nothing is found (the usual case: "/nonexistent" is named), or a cuDNN on the linker path cannot open
        assertTrue(note.contains("/nonexistent (does not exist)") || note.contains("cuDNN"), note);
        assertEquals("cudnn", Attention.Path.CUDNN.name().toLowerCase(java.util.Locale.ROOT));
        assertEquals(Attention.Path.CUDNN, Attention.Path.parse("cudnn"));
        assertEquals(Attention.Path.FLASH, CudaBackend.effectivePath(Attention.Path.CUDNN, null));
    }

    @Test
    void theBackendRunsTheFlashKernelsAndSaysWhy() {
        GraphBuilder g = new GraphBuilder();
        Node q = g.input("q", 1, 2, 64, 64);
        Node o = g.attention(q, q, q, Float.NaN, MaskSpec.CAUSAL, null, null);
        LaunchArgumentsTest flash = new LaunchArgumentsTest(), cudnn = new LaunchArgumentsTest();
        flash.run(g, o, Map.of("attention", "flash"), Precision.BF16, 90);
        cudnn.run(g, o, Map.of("attention", "cudnn", FfmCudnn.OPTION, "/nonexistent"), Precision.BF16, 90);
        assertFalse(flash.rec.launches.isEmpty());
        assertEquals(
                flash.rec.launches.stream()
                        .map(LaunchArgumentsTest.Launch::entry)
                        .toList(),
                cudnn.rec.launches.stream()
                        .map(LaunchArgumentsTest.Launch::entry)
                        .toList());
        assertTrue(
                cudnn.rec.launches.stream().noneMatch(l -> Kernel.in("convert").contains(l.entry())));
        var rec = new LaunchArgumentsTest.Recorder();
        try (CudaBackend be = new CudaBackend(
                rec, rec, Map.of("attention", "cudnn", FfmCudnn.OPTION, "/nonexistent"), Precision.BF16, 90)) {
            String d = be.description();
            assertTrue(d.contains("attention: flash (attention=cudnn unavailable, flash runs: "), d);
            assertFalse(d.contains("\n"), d);
        }
        // an ATTENTION run alone on the cudnn path with no cuDNN on the stream: the flash launches
        rec.launches.clear();
        Node att = g.build(o).nodes().getLast();
        CudaBuffer[] x = new CudaBuffer[3];
        for (int i = 0; i < 3; i++)
            x[i] = new CudaBuffer(DevPtr.fake(0x100000 * (i + 1)), io.attn.tensor.DType.F32, 8192, null);
        CudaBuffer y = new CudaBuffer(DevPtr.fake(0x500000), io.attn.tensor.DType.F32, 8192, null);
        CudaStream st = new CudaStream(rec, rec);
        assertNull(st.cudnn());
        Attention.run(
                st, Attention.Path.CUDNN, Attention.Fp32Choice.DEFAULT, Precision.BF16, 90, null, att, y, x, null);
        assertNotNull(Attention.defaultVariant(Precision.BF16, 64));
        assertEquals(
                Attention.defaultVariant(Precision.BF16, 64),
                rec.launches.getLast().entry());
    }

    private static String name(CudnnAttention.OpSpec op) {
        return switch (op) {
            case CudnnAttention.MatmulOp m -> "matmul";
            case CudnnAttention.PointwiseOp p -> "pw" + p.mode();
            case CudnnAttention.ReductionOp r -> "red" + r.op();
        };
    }

    private static List<Long> box(long[] a) {
        return java.util.Arrays.stream(a).boxed().toList();
    }

    private static long offset(CudnnAttention.TensorSpec t, long[] at) {
        long off = 0;
        for (int i = 0; i < 4; i++) off += at[i] * t.strides()[i];
        return off;
    }
}
