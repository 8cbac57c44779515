package io.attn.kernels;

import java.util.List;

/**
 * One kernel entry point: the kernel file (module) that defines it, its {@code extern "C"} name, and the lowest compute
 * capability that can run it. The host launches kernels by these handles, so a misspelt kernel is a compile error
 * rather than a failed {@code cuModuleGetFunction}; {@link Kernels#params} reads each one's parameter list from the
 * PTX.
 */
public enum Kernel {
    ATTENTION_F32("attention", "attention_f32"),
    CACHE_WRITE_F32("cache_write", "cache_write_f32"),
    CONCAT_F32("concat", "concat_f32"),
    ADD_F32("elementwise", "add_f32"),
    SCALE_F32("elementwise", "scale_f32"),
    BIAS_ACT_F32("elementwise", "bias_act_f32"),
    EMBEDDING_F32("embedding", "embedding_f32"),
    FLASH_F32_D32("flash_attention", "flash_f32_d32"),
    FLASH_F32_D64("flash_attention", "flash_f32_d64"),
    FLASH_F32_D128("flash_attention", "flash_f32_d128"),
    FLASH_BF16_D64("flash_attention_bf16", "flash_bf16_d64"),
    FLASH_BF16_D128("flash_attention_bf16", "flash_bf16_d128"),
    FLASH_F16_D64("flash_attention_bf16", "flash_f16_d64"),
    FLASH_F16_D128("flash_attention_bf16", "flash_f16_d128"),
    F32_TO_BF16("flash_attention_fa2", "f32_to_bf16"),
    F32_TO_F16("flash_attention_fa2", "f32_to_f16"),
    BF16_TO_F32("convert", "bf16_to_f32"),
    F16_TO_F32("convert", "f16_to_f32"),
    FA2_BF16_D64_BR128_W8("flash_attention_fa2", "fa2_bf16_d64_br128_w8"),
    FA2_F16_D64_BR128_W8("flash_attention_fa2", "fa2_f16_d64_br128_w8"),
    FA2_BF16_D64_BR128_W4("flash_attention_fa2", "fa2_bf16_d64_br128_w4"),
    FA2_F16_D64_BR128_W4("flash_attention_fa2", "fa2_f16_d64_br128_w4"),
    FA2_BF16_D64_BR64_W4("flash_attention_fa2", "fa2_bf16_d64_br64_w4"),
    FA2_F16_D64_BR64_W4("flash_attention_fa2", "fa2_f16_d64_br64_w4"),
    FA2_BF16_D128_BR128_W8("flash_attention_fa2", "fa2_bf16_d128_br128_w8"),
    FA2_F16_D128_BR128_W8("flash_attention_fa2", "fa2_f16_d128_br128_w8"),
    FA2_BF16_D128_BR128_W8_BC32("flash_attention_fa2", "fa2_bf16_d128_br128_w8_bc32"),
    FA2_F16_D128_BR128_W8_BC32("flash_attention_fa2", "fa2_f16_d128_br128_w8_bc32"),
    FA2_BF16_D128_BR64_W4("flash_attention_fa2", "fa2_bf16_d128_br64_w4"),
    FA2_F16_D128_BR64_W4("flash_attention_fa2", "fa2_f16_d128_br64_w4"),
    FA2_BF16_D128_BR64_W4_BC32("flash_attention_fa2", "fa2_bf16_d128_br64_w4_bc32"),
    FA2_F16_D128_BR64_W4_BC32("flash_attention_fa2", "fa2_f16_d128_br64_w4_bc32"),
    FLASH_TF32X3_D32_BR64_W4_BC64("flash_attention_tf32", "tf32x3_d32_br64_w4_bc64"),
    FLASH_TF32X3_D32_BR128_W8_BC64("flash_attention_tf32", "tf32x3_d32_br128_w8_bc64"),
    FLASH_TF32X3_D64_BR64_W4_BC64("flash_attention_tf32", "tf32x3_d64_br64_w4_bc64"),
    FLASH_TF32X3_D64_BR128_W8_BC64("flash_attention_tf32", "tf32x3_d64_br128_w8_bc64"),
    FLASH_TF32X3_D64_BR64_W4_BC32("flash_attention_tf32", "tf32x3_d64_br64_w4_bc32"),
    FLASH_TF32X3_D128_BR64_W4_BC32("flash_attention_tf32", "tf32x3_d128_br64_w4_bc32"),
    FLASH_TF32X3_D128_BR128_W8_BC32("flash_attention_tf32", "tf32x3_d128_br128_w8_bc32"),
    FLASH_TF32X1_D32_BR64_W4_BC64("flash_attention_tf32", "tf32x1_d32_br64_w4_bc64"),
    FLASH_TF32X1_D64_BR64_W4_BC64("flash_attention_tf32", "tf32x1_d64_br64_w4_bc64"),
    FLASH_TF32X1_D128_BR64_W4_BC32("flash_attention_tf32", "tf32x1_d128_br64_w4_bc32"),
    GEMM_F32("gemm", "gemm_f32"),
    SPLIT_HEADS_F32("heads", "split_heads_f32"),
    MERGE_HEADS_F32("heads", "merge_heads_f32"),
    RAGGED_TO_PADDED_F32("heads", "ragged_to_padded_f32"),
    PADDED_TO_RAGGED_F32("heads", "padded_to_ragged_f32"),
    LAYER_NORM_F32("layer_norm", "layer_norm_f32"),
    MEAN_F32("mean", "mean_f32"),
    POSITIONAL_ENCODING_F32("positional_encoding", "positional_encoding_f32"),
    SOFTMAX_F32("softmax", "softmax_f32"),
    RMS_NORM_F32("rms_norm", "rms_norm_f32"),
    ROPE_F32("rope", "rope_f32"),
    GLU_F32("glu", "glu_f32"),
    QEMBEDDING_I8("quantized", "qembedding_i8"),
    QRANGE_F32("quantized", "qrange_f32"),
    QPARAMS_F32("quantized", "qparams_f32"),
    QQUANTIZE_F32("quantized", "qquantize_f32"),
    QGEMM_I8("quantized", "qgemm_i8");
    private final String file, entry;

    Kernel(String file, String entry) {
        this.file = file;
        this.entry = entry;
    }

    /** The kernel file without extension: {@code kernels/src/main/cuda/<file>.cu}, resource {@code <file>.ptx}. */
    public String file() {
        return file;
    }

    /** The entry point's {@code extern "C"} name in the PTX. */
    public String entry() {
        return entry;
    }

    /** The lowest compute capability (major * 10 + minor) that runs it: its file's ({@link Kernels#minCapability}). */
    public int minCapability() {
        return Kernels.minCapability(file);
    }

    /** The entry points file {@code file} defines, in declaration order. */
    public static List<Kernel> in(String file) {
        return java.util.Arrays.stream(values())
                .filter(k -> k.file.equals(file))
                .toList();
    }
}
