// attention.cu -- straightforward fused attention forward with an online softmax (one pass over the keys).
//
// Shapes: q (B, H, L, D), k (B, H, S, D), v (B, H, S, Dv), o (B, H, L, Dv); D <= 128 and Dv <= 128.
//   o[b,h,i,:] = sum_j p_j v[b,h,j,:],  p = softmax_j(scale * q_i . k_j + masks)
// Masks exactly as softmax.cu: causal (key j > query i masked), a sliding window (keys outside i - winL .. i + winR
//   never visited; 2^30 - 1 for an open side), attn mask (L, S) or (B|1, H|1, L, S) given by its
//   element strides maskStrideB / maskStrideH (0 = broadcast), key padding (B, S); kind 1 = BOOL (non-zero masks
//   out), 2 = ADDITIVE, 3 = RELATIVE (a bias (H|1, L + S - 1) by the key's offset j - i: common.cuh). A query
//   whose every key is masked gets a zero output row.
// Launch: one warp per query row; block = 128 threads (4 rows), grid.x = ceil(B*H*L / 4). No shared memory.
//   Each lane holds q[d] and the output accumulator for d = lane + 32 t (t < 4); the dot product is a warp
//   reduction per key, so the kernel does S sequential steps: simple, not fast (a later kernel tiles K/V in
//   shared memory). The running max m, sum l and accumulator are rescaled by exp(m_old - m_new) per key.
// Variants: the host uses this kernel only with attention=fused and D, Dv <= 128; otherwise GEMM -> softmax -> GEMM.
//   The default is flash_attention.cu; the ranking of all attention variants (not measured yet) is in its header.
#include "common.cuh"  // the masking rule, warp_sum, unroll

#define MAXT 4

extern "C" __global__ void attention_f32(const float* __restrict__ q, const float* __restrict__ k,
                                         const float* __restrict__ v, float* __restrict__ o, int B, int H, int HKV,
                                         int L, int S, int D, int Dv, float scale, int causal,
                                         const float* __restrict__ mask, int maskKind, int maskStrideB,
                                         int maskStrideH, const float* __restrict__ kpm, int kpmKind, int winL,
                                         int winR) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= (size_t)B * H * L) return;  // whole warp leaves together
    int i = (int)(row % L);
    size_t bh = row / L;
    int h = (int)(bh % H), b = (int)(bh / H);
    const float* qr = q + row * D;
    size_t kvh = (size_t)b * HKV + h / (H / HKV);  // grouped-query attention: K/V head of query head h
    const float* kb = k + kvh * S * D;
    const float* vb = v + kvh * S * Dv;
    const float* mr = mask_row(mask, maskKind, b, h, i, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);

    float qv[MAXT], acc[MAXT];
    UNROLL(t, MAXT) {
        int d = lane + 32 * t;
        qv[t] = d < D ? qr[d] : 0.f;
        acc[t] = 0.f;
    }
    float m = -CUDART_INF_F, l = 0.f;
    int jEnd = causal ? min(S, i + 1) : S;
    jEnd = (int)min((long long)jEnd, (long long)i + winR + 1);  // a sliding window: keys i - winL .. i + winR
    for (int j = max(0, i - winL); j < jEnd; j++) {
        const float* kj = kb + (size_t)j * D;
        float part = 0.f;
        UNROLL(t, MAXT) {
            int d = lane + 32 * t;
            if (d < D) part = fmaf(qv[t], kj[d], part);
        }
        bool dead = false;
        float s = scale * warp_sum(part);
        APPLY_MASKS(s, dead, mr[j], maskKind, kr[j], kpmKind);
        if (dead || s == -CUDART_INF_F) continue;
        float mNew = fmaxf(m, s);
        float corr = expf(m - mNew);  // 0 on the first unmasked key (m = -inf)
        float p = expf(s - mNew);
        l = l * corr + p;
        const float* vj = vb + (size_t)j * Dv;
        UNROLL(t, MAXT) {
            int d = lane + 32 * t;
            if (d < Dv) acc[t] = fmaf(p, vj[d], acc[t] * corr);
        }
        m = mNew;
    }
    float inv = l > 0.f ? 1.f / l : 0.f;  // l == 0: every key masked -> zero row
    float* orow = o + row * Dv;
    UNROLL(t, MAXT) {
        int d = lane + 32 * t;
        if (d < Dv) orow[d] = acc[t] * inv;
    }
}
