// flash_attention_tf32.cu -- fp32 flash-attention forward on tensor cores, as PyTorch's fp32 SDPA computes it:
// mma.sync m16n8k8 with tf32 inputs and the 3xTF32 split ("tf32x3"), fp32 accumulation; optional plain 1xTF32.
//
// Computes, like flash_attention.cu: o[b,h,i,:] = sum_j p_j v[b,h,j,:],  p = softmax_j(scale * q_i . k_j + masks).
// Shapes: q (B, H, L, D), k (B, H, S, D), v (B, H, S, D), o (B, H, L, D), fp32 row-major, every pointer 16-byte
//   aligned (cp.async 16-byte copies, float2 stores: the host checks and otherwise runs flash_attention.cu);
//   D in {32, 64, 128}, Dv == D. Same argument list and masks as flash_attention.cu: causal (key j > query i masked,
//   top-left aligned), attn mask (L, S) or (B|1, H|1, L, S) by element strides maskStrideB / maskStrideH, key padding
//   (B, S); kind 1 BOOL (non-zero masks out), 2 ADDITIVE (added to the scaled score), 3 RELATIVE (a relative bias,
//   added likewise: common.cuh); a row whose every key is masked
//   gets a zero output row.
// Needs sm_80 (tf32 mma.sync, cvt.rna.tf32.f32, cp.async): compiled for compute_80 (kernels/build-ptx.sh), loaded
//   only on devices of capability >= 8.0 (Kernels.minCapability). Under ATTN_HOST_EMU the host emulator's stand-ins
//   replace mma / cvt (engine-cuda/src/test/emu/emu.cpp) and cp.async becomes a plain synchronous copy.
//
// Launch: block = 32 * W threads (W warps), one block per (b, h, tile of BR = 16 W query rows):
//   grid.x = B * H * ceil(L / BR), no dynamic shared memory. FlashAttention-2 structure: warp w owns query rows
//   q0 + 16 w .. + 15 as mma A fragments (D <= 64: Q split into big/small tf32 once and kept in registers; D = 128:
//   raw fp32 Q in registers, split per k-step, to stay spill-free). Per key tile of BC rows: K (BC x D) and V (BC x D)
//   sit in static shared memory as fp32 rows padded to D + 4 floats, loaded with cp.async 16-byte copies (rows past
//   S zero-filled); the K copy of the next tile is issued as soon as every warp is done with S = Q K^T (it overlaps
//   O += P V), the V copy of the next tile as soon as P V is done (it overlaps the next S). Static shared memory
//   2 * BC * (D + 4) * 4 bytes: 33 KiB (D 128, BC 32), 34 KiB (D 64, BC 64), 18 KiB (D 32, BC 64).
//   Bank conflicts: K fragment reads Ks[8 nt + g][8 ks + t] hit bank (4 g + t) mod 32 (row pitch = 4 mod 32), V
//   fragment reads Vs[8 kk + 2 t (+1)][8 dt + g] hit bank (8 t + g (+4)) mod 32 (2 * pitch = 8 mod 32): both
//   conflict-free.
//   S per warp: D/8 k-steps x BC/8 n-tiles of mma; scale, masks and the online softmax in registers in the exp2
//   domain (each lane holds 2 rows; max over the 4 lanes of a quad by shuffles; sums kept per lane, reduced at the
//   end). Masks are evaluated only on tiles that need them: an attn mask or key padding given, the S tail, or (causal)
//   a tile that crosses the warp's diagonal; causal blocks stop at the block's diagonal and a warp skips the tiles
//   entirely above its own rows.
//   P as the A operand of P V -- the layouts: the S accumulator of n-tile kk gives lane (g, t) the elements
//   c0 = S[g][2t], c1 = S[g][2t+1], c2 = S[g+8][2t], c3 = S[g+8][2t+1]; the tf32 A fragment (16 x 8, k = key) wants
//   a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]. Unlike f16 m16n8k16 these differ, but a sum
//   over keys does not care about their order: we use the permutation k = t <-> key 2t, k = t + 4 <-> key 2t + 1
//   within each group of 8 keys, so the A fragment is (a0, a1, a2, a3) = (c0, c2, c1, c3) with no shuffle, and the
//   B fragment of V is permuted to match: b0 = V[key 8 kk + 2t][col 8 dt + g], b1 = V[key 8 kk + 2t + 1][same col].
//
// Variants (entries tf32x3_d<D>_br<BR>_w<W>_bc<BC>; 1xTF32 ones tf32x1_*):
//   tf32x3_d32_br64_w4_bc64, tf32x3_d32_br128_w8_bc64, tf32x3_d64_br64_w4_bc64, tf32x3_d64_br128_w8_bc64,
//   tf32x3_d64_br64_w4_bc32, tf32x3_d128_br64_w4_bc32, tf32x3_d128_br128_w8_bc32 (attention_variants.json);
//   tf32x1_d32_br64_w4_bc64, tf32x1_d64_br64_w4_bc64, tf32x1_d128_br64_w4_bc32 (precision tf32 only).
// Ranked per head dim (by the sum of non-causal and causal time): NVIDIA H200, 2026-11-27, tools/gpu_sweep.py --runs 40
//   (benchmarks/gpu/2026-11-27-nvidia-h200-sweep.json): kernel time by CUDA events at B=8 H=16 L=S=4096 (and
//   B=64 H=12 L=S=128), TFLOP/s, ratio = PyTorch 2.11 fp32 SDPA (default backend; 15.5 ms at D=64, 23.5 ms at
//   D=128) time / ours. The SIMT kernel (flash_attention.cu): 37.6 ms at D=64, 96.9 ms at D=128. D=32 was not
//   timed. Every tf32x3 entry within 8.3e-7 relative error of float64 on every mask kind (bound 1e-5); tf32x1 up to
//   3.1e-4 (its bound 1e-2, precision tf32).
//   D=32: tf32x3_d32_br64_w4_bc64, tf32x3_d32_br128_w8_bc64 not measured
//   1. tf32x3_d64_br64_w4_bc64     13.5 ms  41 TF/s 1.15x | causal 7.32 ms  38 TF/s 1.12x
//        B=64 H=12 L=S=128: 0.161 ms 0.89x, causal 0.166 ms 0.77x
//   2. tf32x3_d64_br128_w8_bc64    13.9 ms  40 TF/s 1.12x | causal 7.31 ms  38 TF/s 1.12x
//        B=64 H=12 L=S=128: 0.167 ms 0.86x, causal 0.169 ms 0.76x
//   3. tf32x3_d64_br64_w4_bc32     13.9 ms  39 TF/s 1.11x | causal 7.25 ms  38 TF/s 1.13x
//        B=64 H=12 L=S=128: 0.164 ms 0.87x, causal 0.151 ms 0.85x
//   1. tf32x3_d128_br128_w8_bc32   34.4 ms  32 TF/s 0.69x | causal 17.6 ms  31 TF/s 0.69x
//   2. tf32x3_d128_br64_w4_bc32    35.4 ms  31 TF/s 0.66x | causal 23.4 ms  24 TF/s 0.52x
//   Default (flash.fp32=tf32x3, the fp32 default on sm_80+: Attention.tf32Kernel): tf32x3_d64_br64_w4_bc64,
//   tf32x3_d128_br128_w8_bc32, and tf32x3_d32_br64_w4_bc64 (not measured). 1xTF32 (precision tf32, named only):
//      tf32x1_d32_br64_w4_bc64     not measured
//      tf32x1_d64_br64_w4_bc64     7.78 ms  71 TF/s 1.99x | causal 4.08 ms  67 TF/s 2.00x
//        B=64 H=12 L=S=128: 0.125 ms 1.15x, causal 0.122 ms 1.05x
//      tf32x1_d128_br64_w4_bc32    13.5 ms  81 TF/s 1.74x | causal 7.07 ms  78 TF/s 1.72x
//
// Numerics. tf32 keeps fp32's 8-bit exponent and 10 stored mantissa bits (11 significant, unit round-off u_t =
//   2^-11). 3xTF32 splits every operand x = big + small: big = rna_tf32(x), small = rna_tf32(x - big) (x - big is exact
//   in fp32 and |x - big| <= 2^-11 |x|); x - big - small is then <= 2^-11 |x - big| <= 2^-22 |x|, so big + small
//   carries ~21-22 significant bits. Each product x y is formed as small_x big_y + big_x small_y + big_x big_y
//   (each tf32 x tf32 product is exact in the fp32 accumulator's precision) and the dropped terms are small_x small_y
//   (<= 2^-22 |x y|) plus the split residuals (<= 2^-22 |x y| each), so each product errs by <= ~3 * 2^-22 |x y|
//   ~ 7e-7 |x y| before the fp32 accumulation (which is as in any fp32 dot product). S feeds exp2, where an absolute
//   score error e becomes a relative probability error e: with |scale q.k| of a few units the scores err by a few
//   1e-7 relatively, the outputs likewise; errors of independent terms add in quadrature. Bound used: the fp32
//   parity bound, relative Frobenius error <= 1e-5 against the double reference (ParityCases; docs/parity.md). The
//   emulator runs the split exactly as the hardware would, and a test shows that 1xTF32 (the correction terms
//   dropped, each product erring by up to 2^-10 |x y|) exceeds that bound. The softmax (scale, masks, max, exp2,
//   sums, the final division) is fp32.
#include <stdint.h>

#include "common.cuh"  // the masking rule, unroll

#define TF_LOG2E 1.4426950408889634f

__device__ __forceinline__ float tf_as_float(uint32_t u) {
#ifdef ATTN_HOST_EMU
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
#else
    return __uint_as_float(u);
#endif
}

__device__ __forceinline__ float tf_ldg(const float* p) {
#ifdef ATTN_HOST_EMU
    return *p;
#else
    return __ldg(p);
#endif
}

// cvt.rna.tf32.f32: x rounded to tf32 (nearest, ties away from zero), as fp32 bits with the low 13 bits zero
__device__ __forceinline__ uint32_t tf32_rna(float x) {
#ifdef ATTN_HOST_EMU
    return emu_cvt_rna_tf32(x);
#else
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#endif
}

// x = big + small (3xTF32); 1xTF32 computes big only
template <bool X3>
__device__ __forceinline__ void tf32_split(float x, uint32_t& big, uint32_t& small) {
    big = tf32_rna(x);
    if (X3) small = tf32_rna(x - tf_as_float(big));
}

// D (16x8, fp32) += A (16x8, row, tf32) . B (8x8, col, tf32)
__device__ __forceinline__ void mma_tf32(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef ATTN_HOST_EMU  // the host emulator's warp-collective stand-in (engine-cuda/src/test/emu), never in the PTX
    emu_mma_m16n8k8_tf32(d, a, b0, b1);
#else
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// d += a . b with both split: the two correction products first (small magnitudes), then big . big
template <bool X3>
__device__ __forceinline__ void mma_split(float* d, const uint32_t* ab, const uint32_t* as, uint32_t b0b, uint32_t b0s,
                                          uint32_t b1b, uint32_t b1s) {
    if (X3) {
        mma_tf32(d, as, b0b, b1b);
        mma_tf32(d, ab, b0s, b1s);
    }
    mma_tf32(d, ab, b0b, b1b);
}

// 16 bytes global -> shared, asynchronously (zero-filled when !valid; src must still be a valid address)
__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool valid) {
#ifdef ATTN_HOST_EMU
    for (int i = 0; i < 4; i++) dst[i] = valid ? src[i] : 0.f;
#else
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#ifndef ATTN_HOST_EMU
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// wait until at most N of this thread's committed groups are still in flight
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifndef ATTN_HOST_EMU
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// rows j0 .. j0 + BC - 1 of the (S, D) matrix src into the shared tile t (BC x P), zero past row S
template <int D, int BC, int P, int NTH>
__device__ __forceinline__ void load_kv(float (&t)[BC][P], const float* __restrict__ src, int j0, int S, int tid) {
    constexpr int CH = D / 4;  // 16-byte chunks per row
    static_assert((BC * CH) % NTH == 0, "tile chunks must divide among the threads");
    UNROLL(it, BC * CH / NTH) {
        int e = tid + it * NTH, r = e / CH, c = (e % CH) * 4, j = j0 + r;
        bool ok = j < S;
        cp_async16(&t[r][c], ok ? src + (size_t)j * D + c : src, ok);
    }
}

// QM: where the warp's Q A fragments live. 0: split once into big/small tf32 registers; 1: raw fp32 registers, split
// per k-step; 2: re-read from global memory (L1) per key tile and split (D 128 3xTF32: register-spill-free).
template <int D, int BR, int BC, bool X3, int QM>
__device__ __forceinline__ void flash_tf32(const float* __restrict__ q, const float* __restrict__ k,
                                           const float* __restrict__ v, float* __restrict__ o, int B, int H, int HKV, int L,
                                           int S, float scale, int causal, const float* __restrict__ mask,
                                           int maskKind, int maskStrideB, int maskStrideH,
                                           const float* __restrict__ kpm, int kpmKind, int winL,
                                           int winR) {
    constexpr int W = BR / 16, NTH = 32 * W;
    constexpr int KS = D / 8;   // k-steps of Q K^T
    constexpr int NT = BC / 8;  // n-tiles of S (8 keys each) = k-steps of P V
    constexpr int DT = D / 8;   // n-tiles of O (8 columns each)
    constexpr int P = D + 4;    // padded row pitch (floats): conflict-free fragment reads, 16-byte aligned rows
    constexpr bool QPRE = QM == 0;
    constexpr int QK = QPRE ? KS : 1;
    __shared__ __align__(16) float Ks[BC][P];
    __shared__ __align__(16) float Vs[BC][P];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    int tiles = (L + BR - 1) / BR;
    size_t bh = blockIdx.x / tiles;
    int q0 = (int)(blockIdx.x % tiles) * BR;
    int h = (int)(bh % H), b = (int)(bh / H);
    const float* qb = q + bh * L * D;
    size_t kvh = (size_t)b * HKV + h / (H / HKV);  // grouped-query attention: K/V head of query head h
    const float* kb = k + kvh * S * D;
    const float* vb = v + kvh * S * D;
    const float* mb = mask_row(mask, maskKind, b, h, 0, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);
    int w0 = q0 + warp * 16;           // the warp's first query row
    int r0 = w0 + g, r1 = r0 + 8;      // the two query rows this lane's fragments touch

    // a sliding window (keys i - winL .. i + winR): only the key tiles some row of the block sees, from jBegin
    const int jBegin = max(0, q0 - winL) / BC * BC;
    load_kv<D, BC, P, NTH>(Ks, kb, jBegin, S, tid);
    cp_async_commit();
    load_kv<D, BC, P, NTH>(Vs, vb, jBegin, S, tid);
    cp_async_commit();

    float qf[QM == 1 ? KS : 1][4];       // raw Q A fragments (QM 1)
    uint32_t qbig[QK][4], qsml[QK][4];   // split Q A fragments (QM 0)
    UNROLL(ks, QM == 2 ? 0 : KS) {
        int c = ks * 8 + t;
        bool in0 = r0 < L, in1 = r1 < L;
        float a[4];
        a[0] = in0 ? qb[(size_t)r0 * D + c] : 0.f;
        a[1] = in1 ? qb[(size_t)r1 * D + c] : 0.f;
        a[2] = in0 ? qb[(size_t)r0 * D + c + 4] : 0.f;
        a[3] = in1 ? qb[(size_t)r1 * D + c + 4] : 0.f;
        UNROLL(i, 4) {
            if constexpr (QPRE) tf32_split<X3>(a[i], qbig[ks][i], qsml[ks][i]);
            else qf[QM == 1 ? ks : 0][i] = a[i];
        }
    }
    float oacc[DT][4];
    UNROLL(dt, DT) { oacc[dt][0] = oacc[dt][1] = oacc[dt][2] = oacc[dt][3] = 0.f; }
    float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F, l0 = 0.f, l1 = 0.f;  // per-lane partial sums l
    const float sl2 = scale * TF_LOG2E;
    const bool anyMask = maskKind != MASK_NONE || kpmKind != MASK_NONE;

    int jEnd = causal ? min(S, q0 + BR) : S;
    jEnd = (int)min((long long)jEnd, (long long)q0 + BR + winR);
    for (int j0 = jBegin; j0 < jEnd; j0 += BC) {
        bool more = j0 + BC < jEnd;
        cp_async_wait<1>();  // K of this tile has landed (its V may still be in flight)
        __syncthreads();
        // warp-uniform: some key of the tile is visible to the warp (causal, and the window's two sides)
        bool active = (!causal || j0 <= w0 + 15) && j0 <= (long long)w0 + 15 + winR && j0 + BC - 1 >= w0 - winL;
        float sc[NT][4];
        if (active) {
            UNROLL(nt, NT) { sc[nt][0] = sc[nt][1] = sc[nt][2] = sc[nt][3] = 0.f; }
            UNROLL(ks, KS) {
                uint32_t ab[4], as[4];
                UNROLL(i, 4) {
                    if constexpr (QPRE) {
                        ab[i] = qbig[ks][i];
                        as[i] = qsml[ks][i];
                    } else if constexpr (QM == 1) {
                        tf32_split<X3>(qf[ks][i], ab[i], as[i]);
                    } else {  // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
                        int c = ks * 8 + t + (i >= 2 ? 4 : 0), rr = (i & 1) ? r1 : r0;
                        tf32_split<X3>(rr < L ? tf_ldg(qb + (size_t)rr * D + c) : 0.f, ab[i], as[i]);
                    }
                }
                UNROLL(nt, NT) {
                    const float* kp = &Ks[nt * 8 + g][ks * 8 + t];
                    uint32_t b0b, b0s, b1b, b1s;
                    tf32_split<X3>(kp[0], b0b, b0s);
                    tf32_split<X3>(kp[4], b1b, b1s);
                    mma_split<X3>(sc[nt], ab, as, b0b, b0s, b1b, b1s);
                }
            }
            // scale, masks (only where needed), log2 domain, row max
            bool edge = anyMask || j0 + BC > S || (causal && j0 + BC - 1 > w0) || j0 < w0 + 15 - winL
                        || j0 + BC - 1 > (long long)w0 + winR;
            float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
            if (edge) {
                UNROLL(nt, NT) {
                    UNROLL(e, 4) {
                        int i = e < 2 ? r0 : r1, j = j0 + nt * 8 + 2 * t + (e & 1);
                        float x = scale * sc[nt][e];
                        bool dead = j >= S || i >= L || (causal && j > i) || j < i - winL || j > i + winR;
                        APPLY_MASKS(x, dead, mb[MASK_AT(i, j, S, maskKind)], maskKind, kr[j], kpmKind);
                        x = dead ? -CUDART_INF_F : x * TF_LOG2E;
                        sc[nt][e] = x;
                    }
                }
            } else {
                UNROLL(nt, NT) { UNROLL(e, 4) { sc[nt][e] *= sl2; } }
            }
            UNROLL(nt, NT) {
                mx0 = fmaxf(mx0, fmaxf(sc[nt][0], sc[nt][1]));
                mx1 = fmaxf(mx1, fmaxf(sc[nt][2], sc[nt][3]));
            }
#pragma unroll
            for (int off = 1; off < 4; off <<= 1) {  // the 4 lanes of a quad share rows g and g + 8
                mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
                mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
            }
            float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
            float c0 = m0 == -CUDART_INF_F ? 0.f : exp2f(m0 - n0);  // acc and l are 0 while m = -inf
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
        }
        __syncthreads();  // every warp is done with K
        if (more) {
            load_kv<D, BC, P, NTH>(Ks, kb, j0 + BC, S, tid);  // overlaps P V below
            cp_async_commit();
            cp_async_wait<1>();  // V of this tile has landed
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        if (active) {
            // O += P V; k-step kk = S n-tile kk, keys permuted (header): A = (c0, c2, c1, c3)
            UNROLL(kk, NT) {
                uint32_t pb[4], ps[4];
                tf32_split<X3>(sc[kk][0], pb[0], ps[0]);
                tf32_split<X3>(sc[kk][2], pb[1], ps[1]);
                tf32_split<X3>(sc[kk][1], pb[2], ps[2]);
                tf32_split<X3>(sc[kk][3], pb[3], ps[3]);
                UNROLL(dt, DT) {
                    const float* vp = &Vs[kk * 8 + 2 * t][dt * 8 + g];
                    uint32_t b0b, b0s, b1b, b1s;
                    tf32_split<X3>(vp[0], b0b, b0s);
                    tf32_split<X3>(vp[P], b1b, b1s);
                    mma_split<X3>(oacc[dt], pb, ps, b0b, b0s, b1b, b1s);
                }
            }
        }
        __syncthreads();  // every warp is done with V
        if (more) {
            load_kv<D, BC, P, NTH>(Vs, vb, j0 + BC, S, tid);  // overlaps the next S
            cp_async_commit();
        }
    }
    cp_async_wait<0>();  // nothing left in flight when the block exits (jEnd <= 0 never happens: S > 0, L > 0)
#pragma unroll
    for (int off = 1; off < 4; off <<= 1) {
        l0 += __shfl_xor_sync(0xffffffffu, l0, off);
        l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;  // 0: every key masked
    UNROLL(dt, DT) {
        int c = dt * 8 + 2 * t;
        if (r0 < L)
            *reinterpret_cast<float2*>(o + (bh * L + r0) * D + c) = make_float2(oacc[dt][0] * inv0, oacc[dt][1] * inv0);
        if (r1 < L)
            *reinterpret_cast<float2*>(o + (bh * L + r1) * D + c) = make_float2(oacc[dt][2] * inv1, oacc[dt][3] * inv1);
    }
}

#define FLASH_TF32_ENTRY(NAME, DIM, BR, BC, X3, QM)                                                                 \
    extern "C" __global__ void __launch_bounds__(2 * (BR), 1)                                                      \
        NAME(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,                \
             float* __restrict__ o, int B, int H, int HKV, int L, int S, float scale, int causal,                           \
             const float* __restrict__ mask, int maskKind, int maskStrideB, int maskStrideH,                       \
             const float* __restrict__ kpm, int kpmKind, int winL, int winR) {                                     \
        flash_tf32<DIM, BR, BC, X3, QM>(q, k, v, o, B, H, HKV, L, S, scale, causal, mask, maskKind, maskStrideB,   \
                                        maskStrideH, kpm, kpmKind, winL, winR);                                    \
    }

FLASH_TF32_ENTRY(tf32x3_d32_br64_w4_bc64, 32, 64, 64, true, 0)
FLASH_TF32_ENTRY(tf32x3_d32_br128_w8_bc64, 32, 128, 64, true, 0)
FLASH_TF32_ENTRY(tf32x3_d64_br64_w4_bc64, 64, 64, 64, true, 0)
FLASH_TF32_ENTRY(tf32x3_d64_br128_w8_bc64, 64, 128, 64, true, 0)
FLASH_TF32_ENTRY(tf32x3_d64_br64_w4_bc32, 64, 64, 32, true, 0)
FLASH_TF32_ENTRY(tf32x3_d128_br64_w4_bc32, 128, 64, 32, true, 2)
FLASH_TF32_ENTRY(tf32x3_d128_br128_w8_bc32, 128, 128, 32, true, 2)
FLASH_TF32_ENTRY(tf32x1_d32_br64_w4_bc64, 32, 64, 64, false, 0)
FLASH_TF32_ENTRY(tf32x1_d64_br64_w4_bc64, 64, 64, 64, false, 0)
FLASH_TF32_ENTRY(tf32x1_d128_br64_w4_bc32, 128, 64, 32, false, 1)
