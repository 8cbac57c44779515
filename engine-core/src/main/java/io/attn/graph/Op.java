package io.attn.graph;

/**
 * Every operation the engine computes, declared once. Each backend has one exhaustive {@code switch} over this enum
 * (no {@code default}), so adding a value breaks every backend's build until it is handled; each value needs a case in
 * the parity suite (a coverage test fails otherwise).
 *
 * <p>Shape letters used throughout: B batch, H heads, L queries, S keys, E model dim, D head dim, V vocabulary.
 */
public enum Op {
    /** A value supplied per call. Params: {@link OpParams.Input}. */
    INPUT,
    /** A value fixed at graph build time (weights). Params: {@link OpParams.Constant}. */
    CONSTANT,
    /** Batched {@code alpha * op(A) . op(B)}; A {@code (..., M, K)}, B {@code (..., K, N)} or 2-D, shared. */
    MATMUL,
    /** {@code x (..., N) + b (N)}. */
    ADD_BIAS,
    /** Element-wise sum of two tensors of the same shape (residual connections). */
    ADD,
    /** {@code x * factor}. */
    SCALE,
    /** Softmax over the last dimension of {@code scale * x}, with masks (see {@link MaskSpec}). */
    SOFTMAX,
    /** LayerNorm over the last dimension, optional weight and bias. */
    LAYER_NORM,
    /** max(x, 0). */
    RELU,
    /** GELU, exact (erf) or tanh approximation. */
    GELU,
    /** SiLU (swish): {@code x * sigmoid(x)}, PyTorch's {@code nn.SiLU}. */
    SILU,
    /** Row lookup: ids {@code (...)} (integral values stored as float) into a table {@code (V, E)}. */
    EMBEDDING,
    /** {@code x (B, L, E)} plus the sinusoidal encoding of positions {@code offset .. offset+L-1}. */
    POSITIONAL_ENCODING,
    /** {@code (B, L, H*D) -> (B, H, L, D)}. */
    SPLIT_HEADS,
    /** {@code (B, H, L, D) -> (B, L, H*D)}. */
    MERGE_HEADS,
    /** Concatenation along one axis. */
    CONCAT,
    /** Mean over one axis (e.g. averaging attention weights over heads). */
    MEAN,
    /** Scaled dot-product attention {@code softmax(scale Q K^T + masks) V} as one op; q (B,H,L,D), k (B,H,S,D), v (B,H,S,Dv). */
    ATTENTION,
    /**
     * Key/value cache write: cache {@code (B, H, C, D)} with rows {@code p .. p+L-1} of every (batch, head) replaced by
     * x {@code (B, H, L, D)}, where {@code p} is the runtime value of the third input {@code pos (1)} (an integral
     * value stored as float, {@code 0 <= p <= C - L}). The output has the cache's shape. The cache input must be a graph
     * {@link #INPUT} read by nothing else: the executor then runs the op in place, the output sharing the cache's buffer
     * (so a cache bound to a backend buffer stays there across calls); kernels must also accept a distinct output.
     */
    CACHE_WRITE,
    /**
     * RMSNorm over the last dimension, optional weight: {@code x / sqrt(mean(x^2) + eps) * weight} (PyTorch's {@code
     * nn.RMSNorm}, transformers' {@code LlamaRMSNorm}, which computes in float32). Params: {@link OpParams.RmsNorm}.
     */
    RMS_NORM,
    /**
     * Rotary position embedding, transformers' rotate-half layout, on x {@code (B, H, L, D)}: the first {@code
     * rotaryDim} dims of each row become {@code x * cos + rotate_half(x) * sin} ({@code rotate_half(x) = cat(-x2, x1)}
     * over those dims), the rest pass through. Positions: {@code offset + l}, or {@code offset + p + l} with {@code p}
     * the runtime value of a second input {@code (1)}, or {@code offset + ids[b, l]} with ids a second input {@code (B,
     * L)} (per-row position ids: left padding); integral values stored as float. Params: {@link OpParams.Rope}.
     */
    ROPE,
    /**
     * Gated linear unit of a fused up+gate projection: x {@code (..., 2F)} gives {@code act(x[..., :F]) * x[..., F:]}
     * (or {@code x[..., :F] * act(x[..., F:])}), act SiLU (SwiGLU) or GELU (GeGLU). Params: {@link OpParams.Glu}.
     */
    GLU,
    /**
     * Dynamically quantized product (ONNX Runtime's {@code DynamicQuantizeLinear} + {@code MatMulInteger} + the scales):
     * x {@code (..., K)} float, the weight int8 {@code (K, N)} with its scale and zero point (per tensor or per output
     * column) in {@link OpParams.QMatMul}; output {@code (..., N)} float. Each row group of x (the whole tensor, or each
     * sequence) is quantized per call to uint8 with DynamicQuantizeLinear's scale and zero point (float arithmetic,
     * round half to even, saturated); the products are accumulated exactly in int32; then {@code out = (float) acc *
     * (float) (xScale * wScale[n])}. See {@link OpParams.QMatMul} for the exact definition.
     */
    QMATMUL,
    /**
     * Row lookup in an int8 table, dequantized as ONNX's DequantizeLinear: ids {@code (...)} (integral values stored as
     * float), the table {@code (V, E)} with its scale and zero point in {@link OpParams.QEmbedding}; output {@code ids
     * + (E)}, each element {@code (float) (q - zeroPoint) * scale}.
     */
    QEMBEDDING;

    /**
     * The input whose buffer this op's output may share (it is computed in place), or -1. Only {@link #CACHE_WRITE}:
     * its output is its first input, updated. The executor honours it whatever the backend; the input must be a graph
     * input that nothing else reads.
     */
    public int inPlaceInput() {
        return this == CACHE_WRITE ? 0 : -1;
    }
}
