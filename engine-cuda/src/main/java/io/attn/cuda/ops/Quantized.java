package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.AttnException;
import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import java.util.Map;

/**
 * The int8 ops of ONNX Runtime's dynamic quantization ({@code quantized.cu}, issue 37), with the definitions' arithmetic
 * ({@link OpParams.QMatMul}, {@link OpParams.QEmbedding}), so that they give bit for bit what the CPU backend and the
 * double reference give:
 *
 * <ul>
 *   <li><b>QMATMUL</b>: the activations' range per row ({@code qrange_f32}), per row group ({@code qparams_f32}: a
 *       padded batch's padding rows, its second input, left out; a ragged batch's sequences, groups of different sizes,
 *       by where each starts), the rows quantized to {@code q - zero} in int16
 *       ({@code qquantize_f32}), then the exact int32 product with the int8 weight and its float scaling ({@code
 *       qgemm_i8}), and a fused bias and activation in place ({@code bias_act_f32}) when {@link Fusions} matched them.
 *       The weight, its scales and zero points are uploaded once and stay int8 on the device ({@link
 *       CudaStream#deviceInt8}).
 *   <li><b>QEMBEDDING</b>: the int8 table's rows dequantized ({@code qembedding_i8}); a bad id is reported as bad input,
 *       as {@link Embedding}'s.
 * </ul>
 */
public final class Quantized {
    private Quantized() {}

    /** The most K for which the int32 accumulator cannot overflow: K * 255 * 255 < 2^31. */
    static final int MAX_K = (int) ((Integer.MAX_VALUE) / (255L * 255L));

    /** Why this QMATMUL has no CUDA kernel (the CPU backend runs it), or null. */
    public static String unsupported(Node node) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        int k = p.k(), rows = k == 0 ? 0 : node.input(0).shape().size() / k;
        if (k > MAX_K)
            return "an int8 product over K = " + k + " (QMATMUL): its int32 sums could overflow past K = " + MAX_K;
        if ((rows + 63) / 64 > 65535) return "an int8 product of " + rows + " rows (QMATMUL): more than 64 x 65535";
        return null;
    }

    /** QMATMUL into y: x[0] the activations, x[1] (when present) a padded batch's key-padding mask. */
    public static void matmul(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        matmul(st, node, y, x, null, Elementwise.NONE);
    }

    /** QMATMUL into y, then {@code y = act(y + bias)} in place when bias is not null or act is not NONE. */
    static void matmul(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x, CudaBuffer bias, int act) {
        OpParams.QMatMul p = node.params(OpParams.QMatMul.class);
        int k = p.k(), n = p.n(), rows = k == 0 ? 0 : node.input(0).shape().size() / k;
        long size = node.shape().size();
        if (size == 0) return;
        if (k == 0) st.zero(y, size);
        else {
            int[] groups = p.groupsOf(rows);
            int groupRows = groups[0];
            CudaBuffer pad = node.inputs().size() > 1 ? x[1] : null;
            // groups of different sizes (a ragged batch's sequences): where each starts, and each row's group
            float[][] uneven = p.groups() == null ? null : LAYOUTS.computeIfAbsent(p.groups(), g -> layout(g, rows));
            CudaBuffer starts = uneven == null ? null : st.deviceF32(uneven[0]),
                    rowGroup = uneven == null ? null : st.deviceF32(uneven[1]);
            CudaBuffer lohi = st.scratch(2L * rows), sz = st.scratch(2L * groups.length), rowScale = st.scratch(rows);
            // q - zero as int16, two per float of the scratch buffer
            CudaBuffer q = st.scratch(((long) rows * k + 1) / 2);
            try {
                st.rows(Kernel.QRANGE_F32, rows, k, args(x[0], lohi).i32(rows).i32(k));
                st.elementwise(
                        Kernel.QPARAMS_F32,
                        groups.length,
                        args(lohi, pad, starts, sz).i32(groups.length).i32(groupRows));
                st.elementwise(
                        Kernel.QQUANTIZE_F32,
                        (long) rows * k,
                        args(x[0], sz, rowGroup, q, rowScale).i32(rows).i32(k).i32(groupRows));
                CudaBuffer w = st.deviceInt8(p.weight().int8()),
                        zero = st.deviceInt8(p.zeroPoint()),
                        scale = st.deviceF32(p.scale());
                st.launch(
                        Kernel.QGEMM_I8,
                        (n + 63) / 64,
                        (rows + 63) / 64,
                        1,
                        256,
                        args(q, w, zero)
                                .i32(p.zeroPoint().length)
                                .ptr(scale)
                                .i32(p.scale().length)
                                .ptr(rowScale)
                                .ptr(y)
                                .i32(rows)
                                .i32(n)
                                .i32(k));
            } finally { // later users of these blocks are queued after this op on the same stream
                for (CudaBuffer b : new CudaBuffer[] {lohi, sz, rowScale, q}) b.close();
            }
        }
        if (bias != null || act != Elementwise.NONE) Elementwise.biasAct(st, y, bias, y, (int) size, n, act);
    }

    // the group starts and row groups of each uneven groups array (one per graph: its QMATMUL nodes share the array),
    // by identity, kept (and uploaded once, DeviceArrays) while the graph lives
    private static final Map<int[], float[][]> LAYOUTS =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /**
     * For row groups of different sizes: {@code [starts (groups + 1), rowGroup (rows)]} as floats (exact: at most 2^24
     * rows); null when every group has the same size (the kernels then count groupRows rows per group).
     */
    static float[][] layout(int[] groups, int rows) {
        boolean even = true;
        for (int g : groups) even &= g == groups[0];
        if (even) return null;
        float[] starts = new float[groups.length + 1], rowGroup = new float[rows];
        int r = 0;
        for (int g = 0; g < groups.length; g++) {
            starts[g] = r;
            for (int i = 0; i < groups[g]; i++) rowGroup[r++] = g;
        }
        starts[groups.length] = r;
        if (r != rows) throw new IllegalStateException("QMATMUL row groups sum to " + r + ", not " + rows + " rows");
        return new float[][] {starts, rowGroup};
    }

    /** QEMBEDDING into y: the int8 table's rows of ids, dequantized. */
    public static void embedding(CudaStream st, Node node, CudaBuffer y, CudaBuffer ids) {
        OpParams.QEmbedding p = node.params(OpParams.QEmbedding.class);
        int n = node.input(0).shape().size(),
                v = p.table().dim(0),
                e = p.table().dim(1);
        if ((long) n * e == 0) return;
        CudaBuffer table = st.deviceInt8(p.table().int8());
        st.elementwise(
                Kernel.QEMBEDDING_I8,
                (long) n * e,
                args(ids, table, y)
                        .i32(n)
                        .i32(v)
                        .i32(e)
                        .f32(p.scale())
                        .i32(p.zeroPoint())
                        .ptr(st.errorWord()));
        int err = st.takeError(node + " QEMBEDDING");
        if (err != 0)
            throw AttnException.badInput(
                    "embedding id at flat position " + (err - 1) + " is not an integer in [0, " + v + ")");
    }
}
