package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.AttnException;
import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.engine.Precision;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;
import java.util.Locale;

/**
 * ATTENTION, by the path option {@code attention} asks for ({@link Path}): {@code flash} (default) runs {@code
 * flash_attention.cu} when D is 32, 64 or 128 and Dv == D (with precision BF16 / FP16 on compute capability 8.0+, the
 * tensor-core kernels of {@code flash_attention_bf16.cu} for D = 64 / 128: {@link #flashKernel}); {@code fused} runs
 * {@code attention.cu} (one warp per query) when D, Dv <= 128; otherwise, and for {@code unfused}, GEMM -> masked
 * softmax -> GEMM on a scratch buffer of scores.
 */
public final class Attention {
    private Attention() {}

    private static final int FUSED_MAX_D = 128;
    /** Query rows per block of the fp32 and the 16-bit flash kernels (their headers). */
    public static final int FLASH_F32_ROWS = 32, FLASH_16_ROWS = 64;

    /** Which attention kernel the {@code attention} option asks for. */
    public enum Path {
        FLASH,
        FUSED,
        UNFUSED;

        /** The option's value (null: the default, flash); anything else is a bad-input error. */
        public static Path parse(String option) {
            String v = option == null ? "flash" : option.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "flash" -> FLASH;
                case "fused" -> FUSED;
                case "unfused" -> UNFUSED;
                default -> throw AttnException.badInput("option attention=" + v + ": expected flash, fused or unfused");
            };
        }
    }

    /**
     * The flash-attention kernel for head dims {@code d}, {@code dv} at {@code precision} on a device of compute
     * capability {@code capability}, or null when no flash kernel applies (then the unfused path runs): the 16-bit
     * tensor-core kernels for BF16 / FP16 when capability >= 80, D is 64 or 128 and every pointer is 8-byte aligned
     * ({@code aligned8}); otherwise the fp32 kernel when D is 32, 64 or 128; always Dv == D.
     */
    public static Kernel flashKernel(Precision precision, int capability, int d, int dv, boolean aligned8) {
        if (dv != d) return null;
        boolean sixteen = precision == Precision.BF16 || precision == Precision.FP16;
        if (sixteen && capability >= 80 && aligned8 && (d == 64 || d == 128)) {
            boolean bf16 = precision == Precision.BF16;
            return d == 64
                    ? (bf16 ? Kernel.FLASH_BF16_D64 : Kernel.FLASH_F16_D64)
                    : (bf16 ? Kernel.FLASH_BF16_D128 : Kernel.FLASH_F16_D128);
        }
        return switch (d) {
            case 32 -> Kernel.FLASH_F32_D32;
            case 64 -> Kernel.FLASH_F32_D64;
            case 128 -> Kernel.FLASH_F32_D128;
            default -> null;
        };
    }

    private static boolean isF32(Kernel flash) {
        return flash == Kernel.FLASH_F32_D32 || flash == Kernel.FLASH_F32_D64 || flash == Kernel.FLASH_F32_D128;
    }

    /**
     * The scratch memory (floats) {@link #run} needs for {@code node}: the B*H*L*S scores when the unfused path may run,
     * else 0. The flash kernel's choice between 16 and 32 bits depends on pointer alignment, known only at run time,
     * so this assumes the one with more blocks.
     */
    public static long scratch(Path path, Precision precision, int capability, Node node) {
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = kv.dim(2), dv = vs.dim(3);
        if ((long) b * h * l * dv == 0 || s == 0) return 0;
        boolean flash = path == Path.FLASH
                && flashKernel(precision, capability, d, dv, false) != null
                && (long) b * h * ((l + FLASH_F32_ROWS - 1) / FLASH_F32_ROWS) <= Integer.MAX_VALUE;
        boolean fused = path == Path.FUSED && d <= FUSED_MAX_D && dv <= FUSED_MAX_D;
        return flash || fused ? 0 : (long) b * h * l * s;
    }

    /**
     * ATTENTION {@code node} into y. The unfused path keeps its scores in {@code scratch} ({@link #scratch} floats,
     * planned by the executor), or, when it is null (a node run alone), in a buffer from the pool.
     */
    public static void run(
            CudaStream st,
            Path path,
            Precision precision,
            int capability,
            Node node,
            CudaBuffer y,
            CudaBuffer[] x,
            CudaBuffer scratch) {
        var p = node.params(OpParams.Attention.class);
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = kv.dim(2), dv = vs.dim(3);
        long outN = (long) b * h * l * dv;
        if (outN == 0) return;
        if (s == 0) { // no keys: every row fully masked -> zeros
            st.zero(y, outN);
            return;
        }
        Kernel flash =
                path == Path.FLASH ? flashKernel(precision, capability, d, dv, aligned8(x[0], x[1], x[2], y)) : null;
        if (flash != null) {
            int rows = isF32(flash) ? FLASH_F32_ROWS : FLASH_16_ROWS;
            long blocks = (long) b * h * ((l + rows - 1) / rows);
            if (blocks <= Integer.MAX_VALUE) {
                Masks mk = Masks.of(p.mask(), node, x, 3, l, s);
                st.launch(
                        flash,
                        (int) blocks,
                        1,
                        1,
                        128,
                        args(x[0], x[1], x[2], y)
                                .i32(b)
                                .i32(h)
                                .i32(l)
                                .i32(s)
                                .f32(p.scale())
                                .i32(p.mask().causal() ? 1 : 0)
                                .then(mk::appendTo));
                return;
            }
        }
        if (path == Path.FUSED && d <= FUSED_MAX_D && dv <= FUSED_MAX_D) {
            Masks mk = Masks.of(p.mask(), node, x, 3, l, s);
            long rows = (long) b * h * l;
            st.launch(
                    Kernel.ATTENTION_F32,
                    (int) ((rows + 3) / 4),
                    1,
                    1,
                    128,
                    args(x[0], x[1], x[2], y)
                            .i32(b)
                            .i32(h)
                            .i32(l)
                            .i32(s)
                            .i32(d)
                            .i32(dv)
                            .f32(p.scale())
                            .i32(p.mask().causal() ? 1 : 0)
                            .then(mk::appendTo));
            return;
        }
        // unfused: scores = Q K^T (B*H batches of L x S), softmax in place with scale and masks, out = P V
        long need = (long) b * h * l * s;
        if (scratch != null && scratch.capacity() < need)
            throw new IllegalStateException(node + ": scratch of " + scratch.capacity() + " floats, needs " + need);
        CudaBuffer scores = scratch != null ? scratch : st.scratch(need);
        try {
            st.gemm(false, true, l, s, d, 1f, x[0], d, (long) l * d, x[1], d, (long) s * d, scores, b * h);
            Softmax.rows(st, scores, scores, b, h, l, s, p.scale(), p.mask(), node, x, 3);
            st.gemm(false, false, l, dv, s, 1f, scores, s, (long) l * s, x[2], dv, (long) s * dv, y, b * h);
        } finally {
            if (scores != scratch) scores.close(); // to the pool; later users are queued after these kernels
        }
    }

    private static boolean aligned8(CudaBuffer... bufs) {
        for (CudaBuffer c : bufs) if ((c.address() & 7) != 0) return false;
        return true;
    }
}
