package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.AttnException;
import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.cuda.CudnnAttention;
import io.attn.cuda.KernelArgs;
import io.attn.engine.Precision;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * ATTENTION, by the path option {@code attention} asks for ({@link Path}): {@code flash} (default) runs {@code
 * flash_attention.cu} when D is 32, 64 or 128 and Dv == D (with precision BF16 / FP16 on compute capability 8.0+ and
 * D = 64 / 128, the FlashAttention-2 kernels of {@code flash_attention_fa2.cu} on q, k, v converted once to 16 bits,
 * or the older tensor-core kernels of {@code flash_attention_bf16.cu}: {@link #sixteenBit}, option {@value
 * #VARIANT_OPTION}); {@code fused} runs
 * {@code attention.cu} (one warp per query) when D, Dv <= 128; otherwise, and for {@code unfused}, GEMM -> masked
 * softmax -> GEMM on a scratch buffer of scores. fp32 flash attention runs on {@code flash_attention_tf32.cu} (3xTF32
 * tensor cores, fp32-level error) on compute capability 8.0+ where it applies, else on the SIMT kernel of {@code
 * flash_attention.cu}; option {@code flash.fp32=simt} ({@link Fp32Choice}) asks for the SIMT kernel always.
 */
public final class Attention {
    private Attention() {}

    private static final int FUSED_MAX_D = 128;
    /** Query rows per block of the fp32 and the 16-bit flash kernels (their headers). */
    public static final int FLASH_F32_ROWS = 32, FLASH_16_ROWS = 64;

    /** The backend option naming the 16-bit flash kernel entry ({@link #parseVariant}); unset: {@link #defaultVariant}. */
    public static final String VARIANT_OPTION = "flash.variant";

    /**
     * A 16-bit flash-attention entry: its precision, head dim, query rows per block, threads per block and dynamic
     * shared memory (bytes; 0: static), and whether it reads 16-bit q, k, v (converted first) or fp32.
     */
    public record Variant(Kernel kernel, Precision precision, int d, int rows, int threads, int smem, boolean in16) {
        /** Blocks of a launch over B * H planes of L query rows. */
        public long blocks(int b, int h, int l) {
            return (long) b * h * ((l + rows - 1) / rows);
        }
    }

    private static Variant fa2(Kernel k, int d, int br, int warps, int bc) {
        Precision p = k.entry().startsWith("fa2_bf16") ? Precision.BF16 : Precision.FP16;
        return new Variant(k, p, d, br, 32 * warps, 2 * (br * d + 4 * bc * d), true);
    }

    /**
     * Every 16-bit flash entry (attention_variants.json lists the same, with the launch geometry): the FlashAttention-2
     * kernels (flash_attention_fa2.cu; their header names the geometry), then the older tensor-core kernels, reachable
     * as {@code flash.variant=flash_bf16_d64} etc. (the baseline).
     */
    public static final List<Variant> VARIANTS = List.of(
            fa2(Kernel.FA2_BF16_D64_BR128_W8, 64, 128, 8, 64),
            fa2(Kernel.FA2_F16_D64_BR128_W8, 64, 128, 8, 64),
            fa2(Kernel.FA2_BF16_D64_BR128_W4, 64, 128, 4, 64),
            fa2(Kernel.FA2_F16_D64_BR128_W4, 64, 128, 4, 64),
            fa2(Kernel.FA2_BF16_D64_BR64_W4, 64, 64, 4, 64),
            fa2(Kernel.FA2_F16_D64_BR64_W4, 64, 64, 4, 64),
            fa2(Kernel.FA2_BF16_D128_BR128_W8, 128, 128, 8, 64),
            fa2(Kernel.FA2_F16_D128_BR128_W8, 128, 128, 8, 64),
            fa2(Kernel.FA2_BF16_D128_BR128_W8_BC32, 128, 128, 8, 32),
            fa2(Kernel.FA2_F16_D128_BR128_W8_BC32, 128, 128, 8, 32),
            fa2(Kernel.FA2_BF16_D128_BR64_W4, 128, 64, 4, 64),
            fa2(Kernel.FA2_F16_D128_BR64_W4, 128, 64, 4, 64),
            fa2(Kernel.FA2_BF16_D128_BR64_W4_BC32, 128, 64, 4, 32),
            fa2(Kernel.FA2_F16_D128_BR64_W4_BC32, 128, 64, 4, 32),
            new Variant(Kernel.FLASH_BF16_D64, Precision.BF16, 64, FLASH_16_ROWS, 128, 0, false),
            new Variant(Kernel.FLASH_BF16_D128, Precision.BF16, 128, FLASH_16_ROWS, 128, 0, false),
            new Variant(Kernel.FLASH_F16_D64, Precision.FP16, 64, FLASH_16_ROWS, 128, 0, false),
            new Variant(Kernel.FLASH_F16_D128, Precision.FP16, 128, FLASH_16_ROWS, 128, 0, false));

    /** The variant of entry {@code k}, or null when it is not a 16-bit flash entry. */
    public static Variant variant(Kernel k) {
        for (Variant v : VARIANTS) if (v.kernel() == k) return v;
        return null;
    }

    /**
     * The default 16-bit flash kernel for head dim {@code d} (64 or 128) at {@code precision} (BF16 or FP16), as the
     * 2026-11-27 H200 sweep ranked them (benchmarks/gpu/2026-11-27-nvidia-h200-sweep.json, B=8 H=16 L=S=4096; headers
     * of flash_attention_fa2.cu): D = 64 BR 128 with 4 warps (bf16 2.02 ms, fp16 2.01 ms; the next, BR 64 with 4 warps,
     * 2.20 / 2.23 ms); D = 128 BR 128 with 8 warps and BC 64 (non-causal + causal: bf16 6.11 ms, tied with BR 64 4
     * warps' 6.10 ms; fp16 6.03 ms against 6.35 ms).
     */
    public static Kernel defaultVariant(Precision precision, int d) {
        boolean bf16 = precision == Precision.BF16;
        return d == 64
                ? (bf16 ? Kernel.FA2_BF16_D64_BR128_W4 : Kernel.FA2_F16_D64_BR128_W4)
                : (bf16 ? Kernel.FA2_BF16_D128_BR128_W8 : Kernel.FA2_F16_D128_BR128_W8);
    }

    /**
     * The entry option {@value #VARIANT_OPTION} names (null when unset): one of {@link #VARIANTS}, of precision {@code
     * precision}; anything else is a one-line bad-input error naming the valid entries.
     */
    public static Kernel parseVariant(String option, Precision precision) {
        if (option == null) return null;
        String v = option.trim();
        Variant found = null;
        for (Variant x : VARIANTS) if (x.kernel().entry().equals(v)) found = x;
        String valid = VARIANTS.stream().map(x -> x.kernel().entry()).collect(Collectors.joining(", "));
        if (found == null)
            throw AttnException.badInput("option " + VARIANT_OPTION + "=" + v + ": expected one of " + valid);
        if (found.precision() != precision)
            throw AttnException.badInput("option " + VARIANT_OPTION + "=" + v + " is a "
                    + found.precision().name().toLowerCase(Locale.ROOT) + " kernel but the backend runs precision "
                    + precision.name().toLowerCase(Locale.ROOT) + ": expected one of "
                    + VARIANTS.stream()
                            .filter(x -> x.precision() == precision)
                            .map(x -> x.kernel().entry())
                            .collect(Collectors.joining(", ")));
        return found.kernel();
    }

    /**
     * The 16-bit flash kernel for head dims {@code d}, {@code dv} at {@code precision} on compute capability {@code
     * capability}: {@code variant} (the option; null: {@link #defaultVariant}) when precision is BF16 / FP16, capability
     * >= 80, D is 64 or 128 and Dv == D; else null. A variant of another head dim is a bad-input error.
     */
    public static Variant sixteenBit(Precision precision, int capability, int d, int dv, Kernel variant) {
        boolean sixteen = precision == Precision.BF16 || precision == Precision.FP16;
        if (!sixteen || capability < 80 || dv != d || (d != 64 && d != 128)) return null;
        Variant v = variant(variant != null ? variant : defaultVariant(precision, d));
        if (v.d() != d)
            throw AttnException.badInput("option " + VARIANT_OPTION + "="
                    + v.kernel().entry() + " is for head dim " + v.d() + ", this attention has head dim " + d);
        return v;
    }

    /** Floats of scratch the converted 16-bit q (B,H,L,D), k and v (B,H,S,D) take, each 16-byte aligned. */
    public static long sixteenBitScratch(int b, int h, int l, int s, int d) {
        return sixteenBitScratch(b, h, h, l, s, d);
    }

    /**
     * Floats of scratch the converted 16-bit q (B,H,L,D), k and v (B,Hkv,S,D) take (grouped-query attention: K/V
     * keep their {@code Hkv} heads), each 16-byte aligned.
     */
    public static long sixteenBitScratch(int b, int h, int hkv, int l, int s, int d) {
        // D is 64 or 128: every tensor is a multiple of 64 halves
        return ((long) b * d * ((long) h * l + 2L * hkv * s) + 1) / 2;
    }

    /**
     * Which attention kernel the {@code attention} option asks for. {@code cudnn}: cuDNN's fused flash SDPA ({@link
     * io.attn.cuda.CudnnAttention}) where it applies, the flash path elsewhere; a backend whose cuDNN did not open runs
     * {@link #FLASH} instead.
     */
    public enum Path {
        FLASH,
        FUSED,
        UNFUSED,
        CUDNN;

        /** The option's value (null: the default, flash); anything else is a bad-input error. */
        public static Path parse(String option) {
            String v = option == null ? "flash" : option.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "flash" -> FLASH;
                case "fused" -> FUSED;
                case "unfused" -> UNFUSED;
                case "cudnn" -> CUDNN;
                default ->
                    throw AttnException.badInput("option attention=" + v + ": expected flash, fused, unfused or cudnn");
            };
        }
    }

    /** Option {@code flash.fp32}: which kernel runs fp32 flash attention ({@link Fp32}). */
    public static final String FP32_OPTION = "flash.fp32";
    /** Option {@code flash.fp32.variant}: a {@code flash_attention_tf32.cu} entry to run instead of the default one. */
    public static final String FP32_VARIANT_OPTION = "flash.fp32.variant";

    /**
     * The fp32 flash kernel the {@code flash.fp32} option asks for: {@code simt} (default: {@code
     * flash_attention.cu}, fp32 FMA) or {@code tf32x3} ({@code flash_attention_tf32.cu}: tf32 tensor cores with the
     * 3xTF32 split, fp32-level error; compute capability 8.0+, D 32 / 64 / 128, 16-byte aligned buffers, otherwise
     * simt runs). The default is tf32x3: on the 2026-11-27 H200 run 2.8x the SIMT kernel at B=8 H=16 L=S=4096 (D=64
     * 13.5 ms against 37.6 ms, D=128 34.4 ms against 96.9 ms), within 1e-5 of float64 on every mask kind
     * (docs/performance-gpu.md).
     */
    public enum Fp32 {
        SIMT,
        TF32X3;

        /** The option's value (null: the default, tf32x3); anything else is a bad-input error. */
        public static Fp32 parse(String option) {
            String v = option == null ? "tf32x3" : option.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "simt" -> SIMT;
                case "tf32x3" -> TF32X3;
                default ->
                    throw AttnException.badInput("option " + FP32_OPTION + "=" + v + ": expected simt or tf32x3");
            };
        }
    }

    /** The tf32 flash entries ({@code flash_attention_tf32.cu}), in declaration order. */
    public static final List<Kernel> TF32_KERNELS = Kernel.in("flash_attention_tf32");

    private static final Pattern TF32_ENTRY = Pattern.compile("tf32x([13])_d(\\d+)_br(\\d+)_w(\\d+)_bc(\\d+)");

    /**
     * The fp32 flash choice of a backend: {@link Fp32} and an optional entry of {@code flash_attention_tf32.cu}
     * ({@code flash.fp32.variant}, which implies tf32 when given). A tf32x1 entry (plain TF32: ~1e-3 relative error)
     * runs only when named, and is meant for precision TF32.
     */
    public record Fp32Choice(Fp32 kind, Kernel variant) {
        /** tf32x3 with the default entry per head dim ({@link #tf32Kernel}); SIMT below compute capability 8.0. */
        public static final Fp32Choice DEFAULT = new Fp32Choice(Fp32.TF32X3, null);

        /** The SIMT kernel always ({@code flash.fp32=simt}). */
        public static final Fp32Choice SIMT = new Fp32Choice(Fp32.SIMT, null);

        /** From the backend options ({@code extra}); bad values are bad-input errors naming the valid ones. */
        public static Fp32Choice parse(Map<String, String> extra) {
            Fp32 kind = Fp32.parse(extra.get(FP32_OPTION));
            String v = extra.get(FP32_VARIANT_OPTION);
            if (v == null) return new Fp32Choice(kind, null);
            String want = v.trim().toLowerCase(Locale.ROOT);
            for (Kernel k : TF32_KERNELS) if (k.entry().equals(want)) return new Fp32Choice(Fp32.TF32X3, k);
            throw AttnException.badInput("option " + FP32_VARIANT_OPTION + "=" + want + ": expected one of "
                    + TF32_KERNELS.stream().map(Kernel::entry).toList());
        }
    }

    /** Head dim of a tf32 flash entry (from its name: {@code tf32x3_d64_br64_w4_bc64}). */
    public static int tf32Dim(Kernel k) {
        return tf32Field(k, 2);
    }

    /** Query rows per block (BR) of a tf32 flash entry. */
    public static int tf32Rows(Kernel k) {
        return tf32Field(k, 3);
    }

    /** Threads per block (32 x warps) of a tf32 flash entry. */
    public static int tf32Threads(Kernel k) {
        return 32 * tf32Field(k, 4);
    }

    private static int tf32Field(Kernel k, int group) {
        Matcher m = TF32_ENTRY.matcher(k.entry());
        if (!m.matches()) throw new IllegalArgumentException(k + " is not a tf32 flash entry");
        return Integer.parseInt(m.group(group));
    }

    /**
     * The tf32 flash kernel for fp32 attention with head dim {@code d} on compute capability {@code capability}, or
     * null (then the SIMT kernel runs): the chosen variant when its D is {@code d}, else the default entry for D, the
     * 2026-11-27 H200 sweep's fastest at B=8 H=16 L=S=4096 (flash_attention_tf32.cu's header): {@code
     * tf32x3_d64_br64_w4_bc64} (13.5 ms), {@code tf32x3_d128_br128_w8_bc32} (34.4 ms non-causal, 17.6 ms causal,
     * against 35.4 / 23.4 ms for BR 64), and for D = 32, not measured, the kernel author's {@code
     * tf32x3_d32_br64_w4_bc64}; null for simt, below capability 8.0, D not 32 / 64 / 128, Dv != D, or when a buffer is
     * not 16-byte aligned ({@code aligned16}: cp.async copies).
     */
    public static Kernel tf32Kernel(Fp32Choice choice, int capability, int d, int dv, boolean aligned16) {
        if (choice.kind() != Fp32.TF32X3 || capability < 80 || dv != d || !aligned16) return null;
        if (choice.variant() != null && tf32Dim(choice.variant()) == d) return choice.variant();
        return switch (d) {
            case 32 -> Kernel.FLASH_TF32X3_D32_BR64_W4_BC64;
            case 64 -> Kernel.FLASH_TF32X3_D64_BR64_W4_BC64;
            case 128 -> Kernel.FLASH_TF32X3_D128_BR128_W8_BC32;
            default -> null;
        };
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
     * The scratch memory (floats) {@link #run} needs for {@code node}: the B*H*L*S scores when the unfused path may run;
     * the 16-bit copies of q, k, v when a FlashAttention-2 kernel may run ({@link #sixteenBitScratch}); else 0. The
     * flash kernel's choice between 16 and 32 bits depends on pointer alignment, known only at run time, so this
     * assumes the one with more blocks, and plans the 16-bit copies whenever their kernel may run.
     */
    public static long scratch(Path path, Precision precision, int capability, Kernel variant, Node node) {
        if (node.params(OpParams.Attention.class).mask().segmented()) return 0; // runRagged: buffers from the pool
        if (path == Path.CUDNN) {
            long flash = scratch(Path.FLASH, precision, capability, variant, node); // where cuDNN declines
            return CudnnAttention.unsupported(precision, capability, node) != null
                    ? flash
                    : Math.max(flash, CudnnAttention.scratch(node));
        }
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = kv.dim(2), dv = vs.dim(3), hkv = kv.dim(1);
        if ((long) b * h * l * dv == 0 || s == 0) return 0;
        boolean flash = path == Path.FLASH
                && flashKernel(precision, capability, d, dv, false) != null
                && (long) b * h * ((l + FLASH_F32_ROWS - 1) / FLASH_F32_ROWS) <= Integer.MAX_VALUE;
        boolean fused = path == Path.FUSED && d <= FUSED_MAX_D && dv <= FUSED_MAX_D;
        if (flash) {
            Variant v = sixteenBit(precision, capability, d, dv, variant);
            return v != null && v.in16() ? sixteenBitScratch(b, h, hkv, l, s, d) : 0;
        }
        return fused ? 0 : (long) b * h * l * s;
    }

    /**
     * ATTENTION {@code node} into y. The unfused path keeps its scores in {@code scratch} ({@link #scratch} floats,
     * planned by the executor), or, when it is null (a node run alone), in a buffer from the pool. {@code fp32}: where
     * the fp32 flash kernel would run (precision FP32 or TF32), a tf32 entry runs instead when {@link #tf32Kernel} gives
     * one; {@code variant}: the 16-bit flash entry option {@value #VARIANT_OPTION} names (null: {@link
     * #defaultVariant}).
     */
    public static void run(
            CudaStream st,
            Path path,
            Fp32Choice fp32,
            Precision precision,
            int capability,
            Kernel variant,
            Node node,
            CudaBuffer y,
            CudaBuffer[] x,
            CudaBuffer scratch) {
        var p = node.params(OpParams.Attention.class);
        if (p.mask().segmented()) {
            runRagged(st, path, fp32, precision, capability, variant, node, y, x);
            return;
        }
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = kv.dim(2), dv = vs.dim(3);
        // grouped-query attention: K/V have hkv heads; query head h reads K/V head h / (H / hkv), in place
        int hkv = kv.dim(1), group = h / hkv;
        long outN = (long) b * h * l * dv;
        if (outN == 0) return;
        if (s == 0) { // no keys: every row fully masked -> zeros
            st.zero(y, outN);
            return;
        }
        if (path == Path.CUDNN) {
            CudnnAttention c = st.cudnn();
            if (c != null && c.run(st, precision, capability, node, y, x, scratch)) return;
            path = Path.FLASH; // not a case cuDNN takes, or no cuDNN: the default path
        }
        Variant v16 = path == Path.FLASH ? sixteenBit(precision, capability, d, dv, variant) : null;
        if (v16 != null && v16.in16() && aligned8(y) && v16.blocks(b, h, l) <= Integer.MAX_VALUE) {
            runSixteenBit(st, v16, p, node, b, h, hkv, l, s, d, y, x, scratch);
            return;
        }
        Kernel flash = path != Path.FLASH
                ? null
                : v16 != null && !v16.in16() && aligned8(x[0], x[1], x[2], y)
                        ? v16.kernel() // the older 16-bit kernel, by flash.variant
                        : flashKernel(precision, capability, d, dv, aligned8(x[0], x[1], x[2], y));
        if (flash != null && isF32(flash)) {
            Kernel tf32 = tf32Kernel(fp32, capability, d, dv, aligned16(x[0], x[1], x[2], y));
            if (tf32 != null) {
                long blocks = (long) b * h * ((l + tf32Rows(tf32) - 1) / tf32Rows(tf32));
                Masks mk = Masks.of(p.mask(), node, x, 3, l, s);
                st.launch(
                        tf32,
                        (int) blocks, // <= the SIMT kernel's block count (32 rows per block), checked by scratch()
                        1,
                        1,
                        tf32Threads(tf32),
                        args(x[0], x[1], x[2], y)
                                .i32(b)
                                .i32(h)
                                .i32(hkv)
                                .i32(l)
                                .i32(s)
                                .f32(p.scale())
                                .i32(p.mask().causal() ? 1 : 0)
                                .then(mk::appendTo));
                return;
            }
        }
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
                                .i32(hkv)
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
                            .i32(hkv)
                            .i32(l)
                            .i32(s)
                            .i32(d)
                            .i32(dv)
                            .f32(p.scale())
                            .i32(p.mask().causal() ? 1 : 0)
                            .then(mk::appendTo));
            return;
        }
        // unfused: scores = Q K^T (B*H batches of L x S), softmax in place with scale and masks, out = P V. With
        // grouped-query attention the query heads of one K/V head are consecutive, so their rows form one (group*L) x D
        // matrix: B*Hkv batches of (group*L) x S scores, laid out exactly as B*H batches of L x S.
        long need = (long) b * h * l * s;
        if (scratch != null && scratch.capacity() < need)
            throw new IllegalStateException(node + ": scratch of " + scratch.capacity() + " floats, needs " + need);
        CudaBuffer scores = scratch != null ? scratch : st.scratch(need);
        try {
            int gl = group * l;
            st.gemm(false, true, gl, s, d, 1f, x[0], d, (long) gl * d, x[1], d, (long) s * d, scores, b * hkv);
            Softmax.rows(st, scores, scores, b, h, l, s, p.scale(), p.mask(), node, x, 3);
            st.gemm(false, false, gl, dv, s, 1f, scores, s, (long) gl * s, x[2], dv, (long) s * dv, y, b * hkv);
        } finally {
            if (scores != scratch) scores.close(); // to the pool; later users are queued after these kernels
        }
    }

    /**
     * One padded group of a ragged batch's sequences: {@code seqs} (each one's first row and length, 2N floats, as
     * {@code heads.cu} reads them), the longest length {@code lp}, the group's boolean key-padding mask {@code (N, lp)},
     * the relative bias's window {@code {T - lp, 2 lp - 1}} (its rows' diagonals {@code -(lp - 1) .. lp - 1}), and the
     * padded ATTENTION node that runs for it (the same scale, causal flag, window and relative bias, plus the key
     * padding).
     */
    public record Group(Node padded, float[] seqs, float[] keyPadding, float[] biasWindow, int n, int lp) {}

    /**
     * The groups of a ragged ATTENTION node's sequences: sorted by length, longest first, a group closed when one more
     * sequence would make its padded rows (count x its longest) exceed 5/4 of its real rows plus 64, so that the padded
     * attention computes and holds at most about 1.25 T rows and a long sequence never pads a batch of short ones.
     */
    public static List<Group> groups(Node node) {
        var p = node.params(OpParams.Attention.class);
        MaskSpec m = p.mask();
        int[] len = m.segmentLengths();
        int t = m.segmentsTotal();
        int[] start = new int[len.length];
        for (int i = 1; i < len.length; i++) start[i] = start[i - 1] + len[i - 1];
        Integer[] order = new Integer[len.length];
        for (int i = 0; i < order.length; i++) order[i] = i;
        java.util.Arrays.sort(order, (a, b) -> len[b] != len[a] ? Integer.compare(len[b], len[a]) : a - b);
        List<Group> out = new java.util.ArrayList<>();
        for (int i = 0; i < order.length; ) {
            int lp = len[order[i]], j = i + 1;
            long real = lp;
            while (j < order.length && (long) (j - i + 1) * lp * 4 <= (real + len[order[j]]) * 5 + 256)
                real += len[order[j++]];
            int n = j - i;
            float[] seqs = new float[2 * n], kpm = new float[n * lp];
            for (int g = 0; g < n; g++) {
                int s0 = order[i + g];
                seqs[2 * g] = start[s0];
                seqs[2 * g + 1] = len[s0];
                java.util.Arrays.fill(kpm, g * lp + len[s0], (g + 1) * lp, 1f);
            }
            Shape q = node.input(0).shape(),
                    k = node.input(1).shape(),
                    v = node.input(2).shape();
            io.attn.graph.GraphBuilder g = new io.attn.graph.GraphBuilder();
            Node pq = g.input("q", n, q.dim(1), lp, q.dim(3)),
                    pk = g.input("k", n, k.dim(1), lp, k.dim(3)),
                    pv = g.input("v", n, v.dim(1), lp, v.dim(3));
            Node bias = m.relativeBias()
                    ? g.input("relative_bias", node.input(3).shape().dim(0), 2 * lp - 1)
                    : null;
            MaskSpec padded =
                    new MaskSpec(m.causal(), m.attnMask(), MaskKind.BOOL).window(m.windowLeft(), m.windowRight());
            Node att = g.attention(pq, pk, pv, p.scale(), padded, bias, g.input("key_padding", n, lp));
            out.add(new Group(att, seqs, kpm, new float[] {t - lp, 2 * lp - 1}, n, lp));
            i = j;
        }
        return List.copyOf(out);
    }

    private static final Map<Node, List<Group>> RAGGED =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /**
     * Why the CUDA backend does not run this ragged ATTENTION (a segmented mask), or null: it runs one batch row of
     * sequences whose padded groups ({@link #groups}) index within 2^31 elements.
     */
    public static String raggedUnsupported(Node node) {
        Shape q = node.input(0).shape(), v = node.input(2).shape();
        if (q.dim(0) != 1) return "a ragged batch of " + q.dim(0) + " batch rows (one holds the sequences)";
        long widest = Math.max(q.dim(3), v.dim(3)) * (long) q.dim(1);
        if (widest * q.dim(2) > Integer.MAX_VALUE) return "a ragged batch of more than 2^31 elements";
        for (Group g : RAGGED.computeIfAbsent(node, Attention::groups))
            if (widest * g.n() * g.lp() > Integer.MAX_VALUE)
                return "a ragged batch whose padded group has more than 2^31 elements";
        return null;
    }

    /**
     * A ragged batch's attention (q {@code (1, H, T, D)}, the sequences one after another) as padded groups of
     * sequences of similar lengths ({@link #groups}): per group, q, k, v (and a relative bias's diagonals) copied into
     * {@code (N, H, lp, D)} buffers from the pool ({@code ragged_to_padded_f32}), the group's padded node run by {@link
     * #run} on whatever path it takes (a key-padding mask hides each sequence's padding; causal, the window and the bias
     * count within a sequence, as they do in the ragged layout), its real rows copied back ({@code
     * padded_to_ragged_f32}). The products and every other op stay ragged: only the attention sees padding.
     */
    static void runRagged(
            CudaStream st,
            Path path,
            Fp32Choice fp32,
            Precision precision,
            int capability,
            Kernel variant,
            Node node,
            CudaBuffer y,
            CudaBuffer[] x) {
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int h = q.dim(1), t = q.dim(2), d = q.dim(3), hkv = kv.dim(1), dv = vs.dim(3);
        boolean relative = node.params(OpParams.Attention.class).mask().relativeBias();
        for (Group g : RAGGED.computeIfAbsent(node, Attention::groups)) {
            CudaBuffer seqs = st.deviceF32(g.seqs());
            List<CudaBuffer> owned = new java.util.ArrayList<>();
            try {
                List<CudaBuffer> in = new java.util.ArrayList<>();
                in.add(toPadded(st, x[0], seqs, g.n(), h, t, g.lp(), d, owned));
                in.add(toPadded(st, x[1], seqs, g.n(), hkv, t, g.lp(), d, owned));
                in.add(toPadded(st, x[2], seqs, g.n(), hkv, t, g.lp(), dv, owned));
                if (relative) { // (Hb, 2T - 1) -> (Hb, 2 lp - 1): one row of diagonals per bias head
                    int hb = node.input(3).shape().dim(0);
                    in.add(toPadded(
                            st, x[3], st.deviceF32(g.biasWindow()), 1, hb, 2 * t - 1, 2 * g.lp() - 1, 1, owned));
                }
                in.add(st.deviceF32(g.keyPadding()));
                CudaBuffer out = st.scratch((long) g.n() * h * g.lp() * dv);
                owned.add(out);
                run(
                        st,
                        path,
                        fp32,
                        precision,
                        capability,
                        variant,
                        g.padded(),
                        out,
                        in.toArray(CudaBuffer[]::new),
                        null);
                st.elementwise(
                        Kernel.PADDED_TO_RAGGED_F32,
                        (long) g.n() * h * g.lp() * dv,
                        args(out, y, seqs).i32(g.n()).i32(h).i32(t).i32(g.lp()).i32(dv));
            } finally {
                for (CudaBuffer b : owned) b.close(); // to the pool; later users are queued after these kernels
            }
        }
    }

    /** x (H, T, D), the sequences {@code seqs} picks, into a pool buffer (N, H, lp, D), zero past each sequence. */
    private static CudaBuffer toPadded(
            CudaStream st, CudaBuffer x, CudaBuffer seqs, int n, int h, int t, int lp, int d, List<CudaBuffer> owned) {
        CudaBuffer y = st.scratch((long) n * h * lp * d);
        owned.add(y);
        st.elementwise(
                Kernel.RAGGED_TO_PADDED_F32,
                (long) n * h * lp * d,
                args(x, y, seqs).i32(n).i32(h).i32(t).i32(lp).i32(d));
        return y;
    }

    /** Threads per block of the converters f32_to_bf16 / f32_to_f16 (4 values per thread and step). */
    public static final int CONVERT_THREADS = 256;

    /** Blocks of a converter launch over {@code n} values: ceil(n / 1024), at most 65535, at least 1. */
    public static int convertBlocks(long n) {
        return (int) Math.max(1, Math.min((n + 4L * CONVERT_THREADS - 1) / (4L * CONVERT_THREADS), 65535));
    }

    /**
     * A FlashAttention-2 kernel: q, k, v converted to 16 bits into scratch (q, then k, then v, each 16-byte aligned),
     * then the kernel with its dynamic shared memory.
     */
    private static void runSixteenBit(
            CudaStream st,
            Variant v,
            OpParams.Attention p,
            Node node,
            int b,
            int h,
            int hkv,
            int l,
            int s,
            int d,
            CudaBuffer y,
            CudaBuffer[] x,
            CudaBuffer scratch) {
        long need = sixteenBitScratch(b, h, hkv, l, s, d);
        if (scratch != null && scratch.capacity() < need)
            throw new IllegalStateException(node + ": scratch of " + scratch.capacity() + " floats, needs " + need);
        // cp.async reads 16-byte chunks: the copies must start 16-byte aligned (pool blocks are; a planned slot is one)
        CudaBuffer buf = scratch != null && (scratch.address() & 15) == 0 ? scratch : st.scratch(need);
        try {
            if ((buf.address() & 15) != 0)
                throw new IllegalStateException(
                        node + ": 16-bit scratch at " + buf.address() + " is not 16-byte aligned");
            Kernel convert = v.precision() == Precision.BF16 ? Kernel.F32_TO_BF16 : Kernel.F32_TO_F16;
            long nq = (long) b * h * l * d, nk = (long) b * hkv * s * d;
            long q16 = buf.address(), k16 = q16 + 2 * nq, v16 = k16 + 2 * nk;
            long[] at = {q16, k16, v16}, n = {nq, nk, nk};
            for (int i = 0; i < 3; i++)
                st.launch(
                        convert,
                        convertBlocks(n[i]),
                        1,
                        1,
                        CONVERT_THREADS,
                        args(x[i]).ptr(at[i]).i64(n[i]));
            Masks mk = Masks.of(p.mask(), node, x, 3, l, s);
            st.launch(
                    v.kernel(),
                    (int) v.blocks(b, h, l),
                    1,
                    1,
                    v.threads(),
                    v.smem(),
                    new KernelArgs()
                            .ptr(q16)
                            .ptr(k16)
                            .ptr(v16)
                            .ptr(y)
                            .i32(b)
                            .i32(h)
                            .i32(hkv)
                            .i32(l)
                            .i32(s)
                            .f32(p.scale())
                            .i32(p.mask().causal() ? 1 : 0)
                            .then(mk::appendTo));
        } finally {
            if (buf != scratch) buf.close(); // to the pool; later users are queued after these kernels
        }
    }

    private static boolean aligned16(CudaBuffer... bufs) {
        for (CudaBuffer c : bufs) if ((c.address() & 15) != 0) return false;
        return true;
    }

    private static boolean aligned8(CudaBuffer... bufs) {
        for (CudaBuffer c : bufs) if ((c.address() & 7) != 0) return false;
        return true;
    }
}
