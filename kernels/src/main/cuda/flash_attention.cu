// flash_attention.cu -- fp32 flash-attention forward: Q/K/V tiles in shared memory, online softmax, exact fp32 math.
//
// Shapes: q (B, H, L, D), k (B, H, S, D), v (B, H, S, D), o (B, H, L, D); D in {32, 64, 128} (one entry each:
//   flash_f32_d32, flash_f32_d64, flash_f32_d128); Dv == D (otherwise the host uses another path).
//   o[b,h,i,:] = sum_j p_j v[b,h,j,:],  p = softmax_j(scale * q_i . k_j + masks)
// Masks exactly as softmax.cu / attention.cu: causal (key j > query i masked, top-left aligned), attn mask (L, S) or
//   (B|1, H|1, L, S) given by element strides maskStrideB / maskStrideH (0 = broadcast), key padding (B, S);
//   kind 1 = BOOL (non-zero masks out), 2 = ADDITIVE (added to the scaled score), 3 = RELATIVE (a bias (H|1,
//   L + S - 1) by the key's offset, added likewise; common.cuh's MASK_AT). A query row whose every key is
//   masked gets a zero output row.
// Launch: block = 128 threads (4 warps), one block per (b, h, tile of BR = 32 query rows):
//   grid.x = B * H * ceil(L / 32). Static shared memory: Q tile 32 x D, one K-or-V tile 32 x (D + 1) (the +1 pad
//   keeps the per-lane key rows in distinct banks), P tile 32 x 32; 36.5 KiB for D = 128.
//   Per key tile of BC = 32 rows: load K, each warp scores its 8 query rows against the 32 keys (lane = key),
//   online-softmax update (running max m and sum l per row, warp reductions), P to shared memory; load V over K,
//   each lane accumulates output columns d = lane + 32 t for its warp's 8 rows. Causal launches skip key tiles that
//   lie entirely above the diagonal (j0 >= q0 + BR). A sliding window (keys i - winL .. i + winR; the host passes
//   2^30 - 1 for an open side) masks like causal and walks only the key tiles that some row of the block sees.
// Variants, ranked: NVIDIA H200, 2026-11-27, tools/gpu_sweep.py --runs 40
//   (benchmarks/gpu/2026-11-27-nvidia-h200-sweep.json): kernel time by CUDA events at B=8 H=16 L=S=4096 (and
//   B=64 H=12 L=S=128), TFLOP/s, ratio = PyTorch 2.11 fp32 SDPA (default backend) time / ours. fp32 attention paths:
//   1. flash_attention_tf32.cu, tf32 mma.sync with the 3xTF32 split (fp32 default on sm_80+ since 2026-11-27;
//      ranked in its header): D=64 tf32x3_d64_br64_w4_bc64 13.5 ms 1.15x, causal 7.32 ms 1.12x; D=128
//      tf32x3_d128_br128_w8_bc32 34.4 ms 0.69x, causal 17.6 ms 0.69x
//   2. this kernel, fp32 FMA (flash.fp32=simt; the default below sm_80), max relative error 2.1e-7 vs float64:
//      flash_f32_d64               37.6 ms  15 TF/s 0.41x | causal 19.8 ms  14 TF/s 0.41x
//        B=64 H=12 L=S=128: 0.424 ms 0.34x, causal 0.335 ms 0.38x
//      flash_f32_d128              96.9 ms  11 TF/s 0.24x | causal 51.2 ms  11 TF/s 0.24x
//      D=32 not measured
//   3. attention.cu, one warp per query row, no tiling (attention=fused)          -- not measured yet
//   4. unfused GEMM -> masked softmax -> GEMM (attention=unfused, any D / Dv)     -- not measured yet
//   (16-bit: flash_attention_fa2.cu, the default for bf16 / fp16, and flash_attention_bf16.cu, ranked there.)
#include "common.cuh"  // the masking rule, warp_max, warp_sum, unroll

#define FA_BR 32
#define FA_BC 32
#define FA_RPW 8  // query rows per warp

// Rows row0 .. row0 + R - 1 of the (n, D) matrix src into the shared tile t (R x P, P >= D), zero past row n.
template <int R, int D, int P>
__device__ __forceinline__ void load_tile(float (&t)[R][P], const float* __restrict__ src, int row0, int n) {
    for (int e = threadIdx.x; e < R * D; e += blockDim.x) {
        int r = e / D, c = e % D, j = row0 + r;
        t[r][c] = j < n ? src[(size_t)j * D + c] : 0.f;
    }
}

template <int D>
__device__ __forceinline__ void flash_f32(const float* __restrict__ q, const float* __restrict__ k,
                                          const float* __restrict__ v, float* __restrict__ o, int B, int H, int HKV, int L,
                                          int S, float scale, int causal, const float* __restrict__ mask,
                                          int maskKind, int maskStrideB, int maskStrideH,
                                          const float* __restrict__ kpm, int kpmKind, int winL, int winR) {
    constexpr int DT = D / 32;  // output columns per lane
    __shared__ float Qs[FA_BR][D];
    __shared__ float KVs[FA_BC][D + 1];
    __shared__ float Ps[FA_BR][FA_BC];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int tiles = (L + FA_BR - 1) / FA_BR;
    size_t bh = blockIdx.x / tiles;
    int q0 = (int)(blockIdx.x % tiles) * FA_BR;
    int h = (int)(bh % H), b = (int)(bh / H);
    const float* qb = q + bh * L * D;
    size_t kvh = (size_t)b * HKV + h / (H / HKV);  // grouped-query attention: K/V head of query head h
    const float* kb = k + kvh * S * D;
    const float* vb = v + kvh * S * D;
    const float* mb = mask_row(mask, maskKind, b, h, 0, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);

    load_tile<FA_BR, D>(Qs, qb, q0, L);
    float m[FA_RPW], l[FA_RPW], acc[FA_RPW][DT];
    UNROLL(r, FA_RPW) {
        m[r] = -CUDART_INF_F;
        l[r] = 0.f;
        UNROLL(t, DT) { acc[r][t] = 0.f; }
    }
    int jEnd = causal ? min(S, q0 + FA_BR) : S;
    // a sliding window: only the key tiles from the block's first row's window start to its last row's window end
    jEnd = (int)min((long long)jEnd, (long long)q0 + FA_BR + winR);
    for (int j0 = max(0, q0 - winL) / FA_BC * FA_BC; j0 < jEnd; j0 += FA_BC) {
        __syncthreads();  // Q is loaded; the previous V tile is no longer read
        load_tile<FA_BC, D>(KVs, kb, j0, S);
        __syncthreads();
        float s[FA_RPW];
        UNROLL(r, FA_RPW) { s[r] = 0.f; }
        for (int c = 0; c < D; c++) {
            float kk = KVs[lane][c];
            UNROLL(r, FA_RPW) { s[r] = fmaf(Qs[warp * FA_RPW + r][c], kk, s[r]); }
        }
        int j = j0 + lane;
        UNROLL(r, FA_RPW) {
            int i = q0 + warp * FA_RPW + r;
            float x = scale * s[r];
            bool dead = j >= S || i >= L || (causal && j > i) || j < i - winL || j > i + winR;
            APPLY_MASKS(x, dead, mb[MASK_AT(i, j, S, maskKind)], maskKind, kr[j], kpmKind);
            if (dead) x = -CUDART_INF_F;
            float mNew = fmaxf(m[r], warp_max(x));
            float p = x == -CUDART_INF_F ? 0.f : expf(x - mNew);
            float corr = m[r] == -CUDART_INF_F ? 0.f : expf(m[r] - mNew);  // acc and l are 0 while m = -inf
            l[r] = l[r] * corr + warp_sum(p);
            m[r] = mNew;
            Ps[warp * FA_RPW + r][lane] = p;
            UNROLL(t, DT) { acc[r][t] *= corr; }
        }
        __syncthreads();  // every warp is done with K
        load_tile<FA_BC, D>(KVs, vb, j0, S);
        __syncthreads();
        for (int jj = 0; jj < FA_BC; jj++) {
            UNROLL(t, DT) {
                float vv = KVs[jj][lane + 32 * t];
                UNROLL(r, FA_RPW) { acc[r][t] = fmaf(Ps[warp * FA_RPW + r][jj], vv, acc[r][t]); }
            }
        }
    }
    UNROLL(r, FA_RPW) {
        int i = q0 + warp * FA_RPW + r;
        if (i >= L) continue;
        float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;  // l == 0: every key masked -> zero row
        float* orow = o + (bh * L + i) * D;
        UNROLL(t, DT) { orow[lane + 32 * t] = acc[r][t] * inv; }
    }
}

#define FLASH_F32_ENTRY(DIM)                                                                                        \
    extern "C" __global__ void __launch_bounds__(128)                                                              \
        flash_f32_d##DIM(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,    \
                         float* __restrict__ o, int B, int H, int HKV, int L, int S, float scale, int causal,               \
                         const float* __restrict__ mask, int maskKind, int maskStrideB, int maskStrideH,           \
                         const float* __restrict__ kpm, int kpmKind, int winL, int winR) {                         \
        flash_f32<DIM>(q, k, v, o, B, H, HKV, L, S, scale, causal, mask, maskKind, maskStrideB, maskStrideH, kpm, \
                       kpmKind, winL, winR);                                                                       \
    }

FLASH_F32_ENTRY(32)
FLASH_F32_ENTRY(64)
FLASH_F32_ENTRY(128)
