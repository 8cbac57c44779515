// flash_attention_bf16.cu -- flash-attention forward on tensor cores: mma.sync m16n8k16 with bf16 (or fp16) inputs
// and fp32 accumulation.
//
// Needs sm_80 or newer (m16n8k16 bf16/f16 mma): compiled for compute_80 (kernels/build-ptx.sh), a separate PTX
// artifact that the host loads only on devices of compute capability >= 8.0 (Kernels.minCapability). The host
// emulator runs it with a warp-collective stand-in for mma.sync (ATTN_HOST_EMU, engine-cuda/src/test/emu/emu.cpp).
// Shapes as flash_attention.cu: q (B, H, L, D), k (B, H, S, D), v (B, H, S, D), o (B, H, L, D), all fp32 in memory
//   (8-byte aligned: float2 loads/stores); D in {64, 128}, Dv == D. Entries flash_bf16_d64, flash_bf16_d128
//   (precision bf16) and flash_f16_d64, flash_f16_d128 (precision fp16). Same argument list and masks as
//   flash_attention.cu (causal top-left aligned; attn mask (L, S) or (B|1, H|1, L, S) by strides; key padding (B, S);
//   kind 1 BOOL, 2 ADDITIVE, 3 RELATIVE; fully masked rows -> zeros).
// Numerics: Q, K, V and the probabilities P are rounded to 16 bits (round to nearest even) when they become mma
//   operands; products are accumulated in fp32; the softmax (scale, masks, max, exp2, sums) is fp32. bf16 keeps
//   fp32's range with an 8-bit significand (unit round-off 2^-9); fp16 has 11 bits (2^-12) but overflows beyond
//   65504 (inputs that large become inf: use bf16 or fp32 then). Test bound: 2e-2 (bf16) / 4e-3 (fp16) relative
//   Frobenius vs the double reference (FlashAttention16GpuTest explains it).
// Launch: block = 128 threads (4 warps), one block per (b, h, tile of BR = 64 query rows): grid.x = B*H*ceil(L/64).
//   Warp w owns query rows q0 + 16 w .. + 15 as mma A fragments (Q converted from fp32 once, kept in registers).
//   Per key tile of BC = 64: K (64 x D) and V transposed (D x 64) are converted into static shared memory (rows
//   padded by 8 elements: conflict-free 32-bit fragment reads); S = Q K^T by D/16 x 8 mma per warp, masks and the
//   online softmax in registers (each lane holds 2 rows; max reduced over the 4 lanes of a quad, sums kept per lane
//   and reduced at the end), the S accumulators re-packed as the A operand of P V (FlashAttention-2 register reuse),
//   O (16 x D per warp) in registers. Static shared memory 35 KiB for D = 128, 18 KiB for D = 64.
// Measured: NVIDIA H200, 2026-11-27, tools/gpu_sweep.py --runs 40 (benchmarks/gpu/2026-11-27-nvidia-h200-sweep.json),
//   kernel time by CUDA events (fp32 inputs, no converters), TFLOP/s, ratio = PyTorch 2.11 SDPA FLASH (same
//   precision) time / ours. Far behind the FA2 kernels of flash_attention_fa2.cu (the default; 2.0 ms at D=64):
//   reachable as flash.variant=ENTRY only.
//      flash_bf16_d64              19.0 ms  29 TF/s 0.10x | causal 10.3 ms  27 TF/s 0.10x
//        B=64 H=12 L=S=128: 0.233 ms 0.22x, causal 0.229 ms 0.22x
//      flash_f16_d64               18.9 ms  29 TF/s 0.10x | causal 10.2 ms  27 TF/s 0.10x
//        B=64 H=12 L=S=128: 0.220 ms 0.22x, causal 0.218 ms 0.23x
//      flash_bf16_d128             47.3 ms  23 TF/s 0.07x | causal 25.0 ms  22 TF/s 0.07x
//      flash_f16_d128              47.2 ms  23 TF/s 0.07x | causal 25.1 ms  22 TF/s 0.07x
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common.cuh"  // the masking rule, unroll

#define FB_BR 64
#define FB_BC 64

// two floats -> one 32-bit register of two 16-bit values (round to nearest even), lo in the low half
template <bool F16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if (F16) {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    } else {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    }
}

template <bool F16>
__device__ __forceinline__ unsigned short to16(float x) {
    if (F16) {
        __half v = __float2half_rn(x);
        return *reinterpret_cast<unsigned short*>(&v);
    } else {
        __nv_bfloat16 v = __float2bfloat16_rn(x);
        return *reinterpret_cast<unsigned short*>(&v);
    }
}

// D (16x8, fp32) += A (16x16, row) . B (16x8, col), 16-bit inputs (bf16 or fp16), fp32 accumulation
template <bool F16>
__device__ __forceinline__ void mma16(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef ATTN_HOST_EMU  // the host emulator's warp-collective stand-in (engine-cuda/src/test/emu), never in the PTX
    emu_mma_m16n8k16(d, a, b0, b1, F16);
#else
    if (F16)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

template <int D, bool F16>
__device__ __forceinline__ void flash_16(const float* __restrict__ q, const float* __restrict__ k,
                                           const float* __restrict__ v, float* __restrict__ o, int B, int H, int HKV, int L,
                                           int S, float scale, int causal, const float* __restrict__ mask,
                                           int maskKind, int maskStrideB, int maskStrideH,
                                           const float* __restrict__ kpm, int kpmKind, int winL, int winR) {
    constexpr int KS = D / 16;      // k-steps of Q K^T
    constexpr int NT = FB_BC / 8;   // n-tiles of S (8 keys each)
    constexpr int DT = D / 8;       // n-tiles of O (8 columns each)
    constexpr int KP = D + 8, VP = FB_BC + 8;
    __shared__ __align__(16) unsigned short Ks[FB_BC][KP];
    __shared__ __align__(16) unsigned short Vt[D][VP];
    const float LOG2E = 1.4426950408889634f;
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    int tiles = (L + FB_BR - 1) / FB_BR;
    size_t bh = blockIdx.x / tiles;
    int q0 = (int)(blockIdx.x % tiles) * FB_BR;
    int h = (int)(bh % H), b = (int)(bh / H);
    const float* qb = q + bh * L * D;
    size_t kvh = (size_t)b * HKV + h / (H / HKV);  // grouped-query attention: K/V head of query head h
    const float* kb = k + kvh * S * D;
    const float* vb = v + kvh * S * D;
    const float* mb = mask_row(mask, maskKind, b, h, 0, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);
    int r0 = q0 + warp * 16 + g, r1 = r0 + 8;  // the two query rows this lane's fragments touch

    uint32_t qa[KS][4];
    UNROLL(ks, KS) {
        int c = ks * 16 + 2 * t;
        const float* p0 = qb + (size_t)r0 * D + c;
        const float* p1 = qb + (size_t)r1 * D + c;
        bool in0 = r0 < L, in1 = r1 < L;
        qa[ks][0] = in0 ? pack2<F16>(p0[0], p0[1]) : 0u;
        qa[ks][1] = in1 ? pack2<F16>(p1[0], p1[1]) : 0u;
        qa[ks][2] = in0 ? pack2<F16>(p0[8], p0[9]) : 0u;
        qa[ks][3] = in1 ? pack2<F16>(p1[8], p1[9]) : 0u;
    }
    float oacc[DT][4];
    UNROLL(dt, DT) { oacc[dt][0] = oacc[dt][1] = oacc[dt][2] = oacc[dt][3] = 0.f; }
    float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F, l0 = 0.f, l1 = 0.f;  // per-lane partial sums l

    int jEnd = causal ? min(S, q0 + FB_BR) : S;
    // a sliding window (keys i - winL .. i + winR): only the key tiles some row of the block sees
    jEnd = (int)min((long long)jEnd, (long long)q0 + FB_BR + winR);
    for (int j0 = max(0, q0 - winL) / FB_BC * FB_BC; j0 < jEnd; j0 += FB_BC) {
        __syncthreads();  // the previous tile is no longer read
        for (int e = tid; e < FB_BC * D / 2; e += blockDim.x) {
            int r = e / (D / 2), c = (e % (D / 2)) * 2, j = j0 + r;
            float2 kv = j < S ? *reinterpret_cast<const float2*>(kb + (size_t)j * D + c) : make_float2(0.f, 0.f);
            *reinterpret_cast<uint32_t*>(&Ks[r][c]) = pack2<F16>(kv.x, kv.y);
        }
        for (int e = tid; e < FB_BC * D; e += blockDim.x) {
            int r = e / D, c = e % D, j = j0 + r;
            Vt[c][r] = to16<F16>(j < S ? vb[(size_t)j * D + c] : 0.f);
        }
        __syncthreads();

        float sc[NT][4];
        UNROLL(nt, NT) {
            sc[nt][0] = sc[nt][1] = sc[nt][2] = sc[nt][3] = 0.f;
            UNROLL(ks, KS) {
                const unsigned short* kr0 = &Ks[nt * 8 + g][ks * 16 + 2 * t];
                mma16<F16>(sc[nt], qa[ks], *reinterpret_cast<const uint32_t*>(kr0),
                           *reinterpret_cast<const uint32_t*>(kr0 + 8));
            }
        }
        // scale, masks (log2 domain), row max
        float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
        UNROLL(nt, NT) {
            UNROLL(e, 4) {
                int i = e < 2 ? r0 : r1, j = j0 + nt * 8 + 2 * t + (e & 1);
                float x = scale * sc[nt][e];
                bool dead = j >= S || i >= L || (causal && j > i) || j < i - winL || j > i + winR;
                APPLY_MASKS(x, dead, mb[MASK_AT(i, j, S, maskKind)], maskKind, kr[j], kpmKind);
                x = dead ? -CUDART_INF_F : x * LOG2E;
                sc[nt][e] = x;
                if (e < 2) mx0 = fmaxf(mx0, x);
                else mx1 = fmaxf(mx1, x);
            }
        }
#pragma unroll
        for (int off = 1; off < 4; off <<= 1) {  // the 4 lanes of a quad share rows g and g + 8
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
        }
        float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
        float c0 = m0 == -CUDART_INF_F ? 0.f : exp2f(m0 - n0);
        float c1 = m1 == -CUDART_INF_F ? 0.f : exp2f(m1 - n1);
        m0 = n0;
        m1 = n1;
        float s0 = 0.f, s1 = 0.f;
        UNROLL(nt, NT) {
            UNROLL(e, 4) {
                float x = sc[nt][e];
                float p = x == -CUDART_INF_F ? 0.f : exp2f(x - (e < 2 ? n0 : n1));
                sc[nt][e] = p;
                if (e < 2) s0 += p;
                else s1 += p;
            }
        }
        l0 = l0 * c0 + s0;
        l1 = l1 * c1 + s1;
        UNROLL(dt, DT) {
            oacc[dt][0] *= c0;
            oacc[dt][1] *= c0;
            oacc[dt][2] *= c1;
            oacc[dt][3] *= c1;
        }
        // O += P V: the S accumulators of key tiles 2kk, 2kk+1 are the A fragment of k-step kk
        UNROLL(kk, FB_BC / 16) {
            uint32_t pa[4];
            pa[0] = pack2<F16>(sc[2 * kk][0], sc[2 * kk][1]);
            pa[1] = pack2<F16>(sc[2 * kk][2], sc[2 * kk][3]);
            pa[2] = pack2<F16>(sc[2 * kk + 1][0], sc[2 * kk + 1][1]);
            pa[3] = pack2<F16>(sc[2 * kk + 1][2], sc[2 * kk + 1][3]);
            UNROLL(dt, DT) {
                const unsigned short* vr = &Vt[dt * 8 + g][kk * 16 + 2 * t];
                mma16<F16>(oacc[dt], pa, *reinterpret_cast<const uint32_t*>(vr),
                           *reinterpret_cast<const uint32_t*>(vr + 8));
            }
        }
    }
#pragma unroll
    for (int off = 1; off < 4; off <<= 1) {
        l0 += __shfl_xor_sync(0xffffffffu, l0, off);
        l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;  // 0: every key masked
    UNROLL(dt, DT) {
        int c = dt * 8 + 2 * t;
        if (r0 < L) *reinterpret_cast<float2*>(o + (bh * L + r0) * D + c) = make_float2(oacc[dt][0] * inv0, oacc[dt][1] * inv0);
        if (r1 < L) *reinterpret_cast<float2*>(o + (bh * L + r1) * D + c) = make_float2(oacc[dt][2] * inv1, oacc[dt][3] * inv1);
    }
}

#define FLASH_16_ENTRY(NAME, DIM, F16)                                                                              \
    extern "C" __global__ void __launch_bounds__(128)                                                              \
        NAME(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,   \
                          float* __restrict__ o, int B, int H, int HKV, int L, int S, float scale, int causal,              \
                          const float* __restrict__ mask, int maskKind, int maskStrideB, int maskStrideH,          \
                          const float* __restrict__ kpm, int kpmKind, int winL, int winR) {                        \
        flash_16<DIM, F16>(q, k, v, o, B, H, HKV, L, S, scale, causal, mask, maskKind, maskStrideB, maskStrideH,   \
                           kpm, kpmKind, winL, winR);                                                              \
    }

FLASH_16_ENTRY(flash_bf16_d64, 64, false)
FLASH_16_ENTRY(flash_bf16_d128, 128, false)
FLASH_16_ENTRY(flash_f16_d64, 64, true)
FLASH_16_ENTRY(flash_f16_d128, 128, true)
