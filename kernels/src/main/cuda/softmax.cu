// softmax.cu -- fused scale + masks + softmax over the last dimension.
//
// Shapes: x, y are scores (B, H, L, S), read as B*H*L rows of S floats. A plain softmax of any rank uses
//   B = H = 1, L = rows, S = last dim, no masks.
//   attn mask: (L, S) or (B|1, H|1, L, S); the caller passes its element strides maskStrideB, maskStrideH
//              (0 for a broadcast dim, and both 0 for an (L, S) mask); the row stride is S.
//   key padding: (B, S).
// Semantics (MaskSpec javadoc in engine-core):
//   s = scale * x; causal masks key j > query i (triu(ones(L,S),1), top-left aligned);
//   mask kind 1 = BOOL (non-zero masks out), 2 = ADDITIVE (added to s; -inf masks out), 0 = none, 3 = RELATIVE
//   (added as ADDITIVE, element j - i + L - 1 of a (H|1, L + S - 1) bias: common.cuh's mask_row);
//   a sliding window: keys j < i - winL or j > i + winR masked (the host passes 2^30 - 1 for an open side);
//   a row whose every key is masked (max = -inf) gives all-zero weights.
// Launch: grid.x = B*H*L (one block per row), block = 256 threads (any multiple of 32 up to 1024),
//   no dynamic shared memory. Three passes over the row (max, sum, write); x is re-read, not cached.
// Variants: one entry, softmax_f32, covers plain and masked softmax. x and y may be the same buffer (in place):
//   every thread reads and writes only its own elements in the last pass, after both reductions.
#include "common.cuh"  // block_max, block_sum, the masking rule

// The masked, scaled score of key j for query i, or -inf when masked out.
__device__ __forceinline__ float score(const float* xr, int j, int i, float scale, int causal,
                                       const float* mr, int maskKind, const float* kr, int kpmKind, int winL,
                                       int winR) {
    if ((causal && j > i) || j < i - winL || j > i + winR) return -CUDART_INF_F;
    bool dead = false;
    float s = scale * xr[j];
    APPLY_MASKS(s, dead, mr[j], maskKind, kr[j], kpmKind);
    return dead ? -CUDART_INF_F : s;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, int H, int L, int S, float scale, int causal,
                                       const float* __restrict__ mask, int maskKind, int maskStrideB,
                                       int maskStrideH, const float* __restrict__ kpm, int kpmKind, int winL,
                                       int winR) {
    __shared__ float red[32];
    size_t row = blockIdx.x;
    int i = (int)(row % L);
    int h = (int)((row / L) % H);
    int b = (int)(row / ((size_t)L * H));
    const float* xr = x + row * S;
    float* yr = y + row * S;
    const float* mr = mask_row(mask, maskKind, b, h, i, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);

    float m = -CUDART_INF_F;
    for (int j = threadIdx.x; j < S; j += blockDim.x) m = fmaxf(m, score(xr, j, i, scale, causal, mr, maskKind, kr, kpmKind, winL, winR));
    m = block_max(m, red);
    if (m == -CUDART_INF_F) {  // every key masked: zero weights
        for (int j = threadIdx.x; j < S; j += blockDim.x) yr[j] = 0.f;
        return;
    }
    float sum = 0.f;
    for (int j = threadIdx.x; j < S; j += blockDim.x) sum += expf(score(xr, j, i, scale, causal, mr, maskKind, kr, kpmKind, winL, winR) - m);
    sum = block_sum(sum, red);
    float inv = 1.f / sum;
    for (int j = threadIdx.x; j < S; j += blockDim.x)
        yr[j] = expf(score(xr, j, i, scale, causal, mr, maskKind, kr, kpmKind, winL, winR) - m) * inv;
}
