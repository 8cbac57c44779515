package io.attn.engine;

/** Arithmetic precision a backend may use. FP32 is the default and the one checked against the reference. */
public enum Precision {
    /** IEEE float32 throughout. */
    FP32,
    /** TensorFloat-32 tensor cores for GEMMs (CUDA only); 10-bit mantissa inputs, float32 accumulation. */
    TF32,
    /** bfloat16 inputs, float32 accumulation (CUDA only). */
    BF16,
    /** float16 inputs, float32 accumulation (CUDA only). */
    FP16
}
