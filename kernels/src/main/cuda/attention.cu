// attention.cu -- straightforward fused attention forward with an online softmax (one pass over the keys).
//
// Shapes: q (B, H, L, D), k (B, H, S, D), v (B, H, S, Dv), o (B, H, L, Dv); D <= 128 and Dv <= 128.
//   o[b,h,i,:] = sum_j p_j v[b,h,j,:],  p = softmax_j(scale * q_i . k_j + masks)
// Masks exactly as softmax.cu: causal (key j > query i masked), attn mask (L, S) or (B|1, H|1, L, S) given by its
//   element strides maskStrideB / maskStrideH (0 = broadcast), key padding (B, S); kind 1 = BOOL (non-zero masks
//   out), 2 = ADDITIVE. A query whose every key is masked gets a zero output row.
// Launch: one warp per query row; block = 128 threads (4 rows), grid.x = ceil(B*H*L / 4). No shared memory.
//   Each lane holds q[d] and the output accumulator for d = lane + 32 t (t < 4); the dot product is a warp
//   reduction per key, so the kernel does S sequential steps: simple, not fast (a later kernel tiles K/V in
//   shared memory). The running max m, sum l and accumulator are rescaled by exp(m_old - m_new) per key.
// Variants: the host uses this kernel only with attention=fused and D, Dv <= 128; otherwise GEMM -> softmax -> GEMM.
//   The default is flash_attention.cu; the ranking of all attention variants (not measured yet) is in its header.
#include <math_constants.h>

#define MASK_NONE 0
#define MASK_BOOL 1
#define MASK_ADD 2
#define MAXT 4

extern "C" __global__ void attention_f32(const float* __restrict__ q, const float* __restrict__ k,
                                         const float* __restrict__ v, float* __restrict__ o, int B, int H, int L,
                                         int S, int D, int Dv, float scale, int causal,
                                         const float* __restrict__ mask, int maskKind, int maskStrideB,
                                         int maskStrideH, const float* __restrict__ kpm, int kpmKind) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= (size_t)B * H * L) return;  // whole warp leaves together
    int i = (int)(row % L);
    size_t bh = row / L;
    int h = (int)(bh % H), b = (int)(bh / H);
    const float* qr = q + row * D;
    const float* kb = k + bh * S * D;
    const float* vb = v + bh * S * Dv;
    const float* mr = maskKind != MASK_NONE ? mask + (size_t)b * maskStrideB + (size_t)h * maskStrideH + (size_t)i * S
                                            : nullptr;
    const float* kr = kpmKind != MASK_NONE ? kpm + (size_t)b * S : nullptr;

    float qv[MAXT], acc[MAXT];
#pragma unroll
    for (int t = 0; t < MAXT; t++) {
        int d = lane + 32 * t;
        qv[t] = d < D ? qr[d] : 0.f;
        acc[t] = 0.f;
    }
    float m = -CUDART_INF_F, l = 0.f;
    int jEnd = causal ? min(S, i + 1) : S;
    for (int j = 0; j < jEnd; j++) {
        const float* kj = kb + (size_t)j * D;
        float part = 0.f;
#pragma unroll
        for (int t = 0; t < MAXT; t++) {
            int d = lane + 32 * t;
            if (d < D) part = fmaf(qv[t], kj[d], part);
        }
        for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
        float s = scale * part;
        if (maskKind == MASK_BOOL) {
            if (mr[j] != 0.f) continue;
        } else if (maskKind == MASK_ADD) {
            s += mr[j];
        }
        if (kpmKind == MASK_BOOL) {
            if (kr[j] != 0.f) continue;
        } else if (kpmKind == MASK_ADD) {
            s += kr[j];
        }
        if (s == -CUDART_INF_F) continue;
        float mNew = fmaxf(m, s);
        float corr = expf(m - mNew);  // 0 on the first unmasked key (m = -inf)
        float p = expf(s - mNew);
        l = l * corr + p;
        const float* vj = vb + (size_t)j * Dv;
#pragma unroll
        for (int t = 0; t < MAXT; t++) {
            int d = lane + 32 * t;
            if (d < Dv) acc[t] = fmaf(p, vj[d], acc[t] * corr);
        }
        m = mNew;
    }
    float inv = l > 0.f ? 1.f / l : 0.f;  // l == 0: every key masked -> zero row
    float* orow = o + row * Dv;
#pragma unroll
    for (int t = 0; t < MAXT; t++) {
        int d = lane + 32 * t;
        if (d < Dv) orow[d] = acc[t] * inv;
    }
}
