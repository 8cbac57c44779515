// common.cuh -- what the kernel files share: the grid-stride step, warp and block reductions, the masking rule of
// the softmax and attention kernels, and the unrolled register-tile loop. Included by the .cu files (nvcc is run in
// this directory: kernels/build-ptx.sh, PtxArtifactsTest); the host emulator includes each .cu inside a namespace,
// so this header defines only inline device functions and macros.
//
// The kernels compute exactly what they computed when each file had its own copy, in the same operation order
// (docs/cuda.md says which PTX files changed, in control flow only).
#ifndef ATTN_COMMON_CUH
#define ATTN_COMMON_CUH

#include <math_constants.h>

// ---- grid-stride loops ----

// the next grid-stride index; never overflows int, even for n close to 2^31
__device__ __forceinline__ int next_idx(int i, int n) {
    int stride = gridDim.x * blockDim.x;
    return n - i > stride ? i + stride : n;
}

// ---- unrolled register-tile loops ----

// for (int i = 0; i < n; i++), fully unrolled (n a compile-time constant): the loops over register tiles (per-lane
// output columns, query rows of a warp, GEMM sub-tiles), whose arrays stay in registers only when every index is a
// constant. A macro, so that the loop is exactly the #pragma unroll loop it replaces.
#define UNROLL(i, n) _Pragma("unroll") for (int i = 0; i < (n); i++)

// ---- reductions ----

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Block-wide reductions; every thread gets the result. red must hold 32 floats.
__device__ __forceinline__ float block_max(float v, float* red) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : -CUDART_INF_F;
    return warp_max(v);
}

__device__ __forceinline__ float block_sum(float v, float* red) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : 0.f;
    return warp_sum(v);
}

// ---- masks (MaskSpec javadoc in engine-core) ----
//
// Causal masks key j > query i (top-left aligned); the callers apply it (by bounds, or by setting dead before
// APPLY_MASKS). The attn mask is (L, S) or (B|1, H|1, L, S), given by its element strides maskStrideB / maskStrideH
// (0 = broadcast; both 0 for an (L, S) mask), row stride S; key padding is (B, S). Kind 1 = BOOL (non-zero masks out), 2 = ADDITIVE (added
// to the scaled score; -inf masks out), 0 = none (the pointer is not read). Kind 3 = RELATIVE: an additive bias by
// relative position, (H|1, L + S - 1) (maskStrideB 0, maskStrideH L + S - 1 or 0), element j - i + L - 1 of head h's
// row added to the score of query i, key j (MaskKind.RELATIVE in engine-core).
#define MASK_NONE 0
#define MASK_BOOL 1
#define MASK_ADD 2
#define MASK_REL 3

// Row i of the attn mask of head (b, h), or null without a mask: element j of the row is query i's mask value for key
// j. Row 0 is the plane the flash kernels index with MASK_AT. A relative bias's row i starts at its element L - 1 - i
// (so the row is a window into the head's L + S - 1 diagonals).
__device__ __forceinline__ const float* mask_row(const float* mask, int maskKind, int b, int h, int i, int L, int S,
                                                 int maskStrideB, int maskStrideH) {
    if (maskKind == MASK_NONE) return nullptr;
    const float* plane = mask + (size_t)b * maskStrideB + (size_t)h * maskStrideH;
    return maskKind == MASK_REL ? plane + (L - 1 - i) : plane + (size_t)i * S;
}

// Where query i's value for key j lies from mask_row(..., 0, ...): i * S + j, or j - i for a relative bias (a row
// stride of -1: one multiply-add either way, the stride chosen once per kernel).
#define MASK_AT(i, j, S, maskKind) ((long long)(i) * ((maskKind) == MASK_REL ? -1 : (S)) + (j))

// The key-padding row of batch b, or null without key padding.
__device__ __forceinline__ const float* kpm_row(const float* kpm, int kpmKind, int b, int S) {
    return kpmKind != MASK_NONE ? kpm + (size_t)b * S : nullptr;
}

// The masking rule, applied to the scaled score x (a float lvalue) of one key: maskValue is the key's attn-mask
// value, kpmValue its key-padding value, each read only when its kind is not MASK_NONE and dead is still false. A BOOL
// value != 0 sets dead (masked out); an ADDITIVE (or RELATIVE) value is added to x. The caller may set dead first (causal, out of
// bounds) and turns a dead score into -inf. A macro, not a function: expanded in place, the flash kernels' inner
// loops keep their select-based code (an inlined function leaves nvcc with branches there).
#define APPLY_MASKS(x, dead, maskValue, maskKind, kpmValue, kpmKind) \
    do {                                                             \
        if (!(dead) && (maskKind) != MASK_NONE) {                    \
            float mv_ = (maskValue);                                 \
            if ((maskKind) == MASK_BOOL) (dead) = mv_ != 0.f;        \
            else (x) += mv_;                                         \
        }                                                            \
        if (!(dead) && (kpmKind) != MASK_NONE) {                     \
            float kv_ = (kpmValue);                                  \
            if ((kpmKind) == MASK_BOOL) (dead) = kv_ != 0.f;         \
            else (x) += kv_;                                         \
        }                                                            \
    } while (0)

#endif  // ATTN_COMMON_CUH
