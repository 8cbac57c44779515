// flash_attention_fa2.cu -- flash-attention forward in the FlashAttention-2 structure on tensor cores: 16-bit (bf16
// or fp16) Q, K, V in global memory, mma.sync m16n8k16 with fp32 accumulation, fp32 output.
//
// Needs sm_80 or newer (m16n8k16 bf16/f16 mma, ldmatrix, cp.async): compiled for compute_80 (kernels/build-ptx.sh),
// loaded only on devices of compute capability >= 8.0 (Kernels.minCapability). The host emulator runs it with
// warp-collective stand-ins for mma.sync and ldmatrix, cp.async as a plain copy (ATTN_HOST_EMU,
// engine-cuda/src/test/emu/emu.cpp).
//
// What it computes: o[b,h,i,:] = sum_j p_j v[b,h,j,:], p = softmax_j(scale * q_i . k_j + masks), as
//   flash_attention.cu. Masks as there: causal (key j > query i masked, top-left aligned), attn mask (L, S) or
//   (B|1, H|1, L, S) by element strides maskStrideB / maskStrideH (0 = broadcast), key padding (B, S); kind 1 BOOL
//   (non-zero masks out), 2 ADDITIVE (added to the scaled score), 3 RELATIVE (a relative bias, added likewise:
//   common.cuh); a row whose every key is masked gets zeros.
// Layout: q (B, H, L, D), k and v (B, H, S, D) as 16-bit values (bf16 for the fa2_bf16_* entries, fp16 for fa2_f16_*),
//   16-byte aligned (cp.async); o (B, H, L, D) fp32, 8-byte aligned (float2 stores). D in {64, 128}, Dv == D. The
//   host converts fp32 tensors once per call with the converter entries f32_to_bf16 / f32_to_f16 (x, out, n): 256
//   threads, grid-stride over n (float4 loads, 8-byte stores when x is 16- and out 8-byte aligned).
// Launch: block = 32 * W threads (__launch_bounds__(32 W, 1): up to 255 registers), one block per (b, h, tile of
//   BR query rows): grid.x = B * H * ceil(L / BR); dynamic shared memory 2 * (BR * D + 4 * BC * D) bytes (Q tile,
//   K and V double-buffered), above 48 KiB for some entries (the host sets
//   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
// Structure (FlashAttention-2): warp w owns BR / W query rows (16 or 32: one or two m16 tiles). The block's Q tile is
//   copied to shared memory with cp.async and read once into registers as mma A fragments (ldmatrix.x4). Key tiles
//   of BC keys: K and V tiles go to shared memory by cp.async.cg 16-byte copies (zero-filled past S: src-size 0),
//   double-buffered (tile t + 1 is in flight while tile t is computed: commit_group / wait_group 1). Shared rows are
//   D 16-bit values, their 16-byte chunks XOR-swizzled (chunk c of row r at chunk c ^ (r & 7)), so that the 8 row
//   addresses of every ldmatrix 8x8 matrix fall in 8 distinct bank groups. S = Q K^T: K tiles as the B operand by
//   ldmatrix.x4 (rows = keys); masks (scale, attn mask, key padding, causal, S tail) only on tiles that need them:
//   every tile with an attn mask or key padding, the causal tiles that cross the warp's diagonal, the tail tile when
//   S % BC != 0; other tiles only scale. Online softmax in the exp2 domain (running max over the 4 lanes of a quad by
//   shuffles; partial sums per lane reduced at the end), the S accumulators re-packed in registers as the A operand
//   of O += P V, V as the B operand by ldmatrix.x4.trans. Causal blocks stop at the diagonal (key tiles above the
//   block's last row are not loaded); a warp whose rows all lie before a key tile skips its mma on it.
// Variants (entry: BR, warps W, BC, dynamic shared memory for D = 64 / 128):
//   fa2_{bf16,f16}_d64_br128_w8        BR 128, 8 warps (16 rows each), BC 64, 48 KiB
//   fa2_{bf16,f16}_d64_br128_w4        BR 128, 4 warps (32 rows each), BC 64, 48 KiB
//   fa2_{bf16,f16}_d64_br64_w4         BR 64,  4 warps (16 rows each), BC 64, 40 KiB
//   fa2_{bf16,f16}_d128_br128_w8       BR 128, 8 warps, BC 64, 96 KiB
//   fa2_{bf16,f16}_d128_br128_w8_bc32  BR 128, 8 warps, BC 32, 64 KiB
//   fa2_{bf16,f16}_d128_br64_w4        BR 64,  4 warps, BC 64, 80 KiB
//   fa2_{bf16,f16}_d128_br64_w4_bc32   BR 64,  4 warps, BC 32, 48 KiB
//   (registers and spills per entry: docs/performance-gpu.md "Kernel resources"; none spills. BR 128 with 4 warps at
//   D = 128 keeps 2 x (64 Q + 64 O) accumulator registers per lane and spills even with BC 32: not offered.)
// Ranked per head dim and precision (by the sum of non-causal and causal time): NVIDIA H200, 2026-11-27,
//   tools/gpu_sweep.py --runs 40 (benchmarks/gpu/2026-11-27-nvidia-h200-sweep.json): kernel time by CUDA events
//   at B=8 H=16 L=S=4096 on 16-bit q, k, v, TFLOP/s, ratio = PyTorch 2.11 SDPA FLASH (same precision) time / ours;
//   "with converters": plus the f32_to_bf16 / f32_to_f16 conversions of fp32 q, k, v (what the engine runs); the
//   short shape B=64 H=12 L=S=128 (D=64) without them. PyTorch's CUDNN backend is 1.6-1.9x faster than its FLASH at
//   B=8 H=16 L=S=4096 (D=64 1.21 ms, D=128 1.69 ms in bf16). Every entry within its bound on every mask kind (max
//   relative error bf16 2.3e-3, fp16 3.0e-4).
//   1. fa2_bf16_d64_br128_w4       2.02 ms 273 TF/s 0.94x | causal 1.16 ms 236 TF/s 0.88x
//        with converters 2.35 / 1.45 ms (0.81x / 0.71x); B=64 H=12 L=S=128: 0.068 ms 0.74x, causal 0.082 ms 0.63x
//   2. fa2_bf16_d64_br64_w4        2.20 ms 249 TF/s 0.86x | causal 1.24 ms 221 TF/s 0.83x
//        with converters 2.51 / 1.51 ms (0.76x / 0.68x); B=64 H=12 L=S=128: 0.071 ms 0.72x, causal 0.068 ms 0.76x
//   3. fa2_bf16_d64_br128_w8       2.63 ms 209 TF/s 0.72x | causal 1.45 ms 189 TF/s 0.71x
//        with converters 2.89 / 1.72 ms (0.66x / 0.60x); B=64 H=12 L=S=128: 0.109 ms 0.46x, causal 0.117 ms 0.44x
//   1. fa2_f16_d64_br128_w4        2.01 ms 273 TF/s 0.93x | causal 1.15 ms 239 TF/s 0.90x
//        with converters 2.31 / 1.45 ms (0.81x / 0.72x); B=64 H=12 L=S=128: 0.069 ms 0.70x, causal 0.083 ms 0.62x
//   2. fa2_f16_d64_br64_w4         2.23 ms 247 TF/s 0.84x | causal 1.27 ms 217 TF/s 0.82x
//        with converters 2.53 / 1.52 ms (0.74x / 0.68x); B=64 H=12 L=S=128: 0.070 ms 0.68x, causal 0.070 ms 0.73x
//   3. fa2_f16_d64_br128_w8        2.63 ms 209 TF/s 0.71x | causal 1.40 ms 196 TF/s 0.74x
//        with converters 2.88 / 1.69 ms (0.65x / 0.62x); B=64 H=12 L=S=128: 0.079 ms 0.61x, causal 0.080 ms 0.64x
//   1. fa2_bf16_d128_br64_w4       3.97 ms 277 TF/s 0.80x | causal 2.13 ms 258 TF/s 0.82x
//        with converters 4.56 / 2.74 ms (0.69x / 0.63x)
//   2. fa2_bf16_d128_br128_w8      3.99 ms 276 TF/s 0.79x | causal 2.12 ms 259 TF/s 0.82x
//        with converters 4.54 / 2.73 ms (0.70x / 0.64x)
//   3. fa2_bf16_d128_br128_w8_bc32 4.51 ms 244 TF/s 0.70x | causal 2.45 ms 225 TF/s 0.71x
//        with converters 5.14 / 3.05 ms (0.61x / 0.57x)
//   4. fa2_bf16_d128_br64_w4_bc32  4.56 ms 241 TF/s 0.69x | causal 2.43 ms 226 TF/s 0.72x
//        with converters 5.07 / 3.01 ms (0.62x / 0.58x)
//   1. fa2_f16_d128_br128_w8       3.91 ms 281 TF/s 0.84x | causal 2.12 ms 259 TF/s 0.84x
//        with converters 4.53 / 2.74 ms (0.72x / 0.65x)
//   2. fa2_f16_d128_br64_w4        4.11 ms 268 TF/s 0.80x | causal 2.24 ms 246 TF/s 0.79x
//        with converters 4.66 / 2.76 ms (0.70x / 0.64x)
//   3. fa2_f16_d128_br64_w4_bc32   4.49 ms 245 TF/s 0.73x | causal 2.43 ms 226 TF/s 0.73x
//        with converters 5.12 / 2.96 ms (0.64x / 0.60x)
//   4. fa2_f16_d128_br128_w8_bc32  4.54 ms 242 TF/s 0.72x | causal 2.44 ms 225 TF/s 0.73x
//        with converters 5.15 / 3.04 ms (0.64x / 0.58x)
//   Defaults (Attention.defaultVariant): fa2_*_d64_br128_w4; fa2_*_d128_br128_w8 (bf16: tied with br64_w4 within
//   0.1%, 6.11 against 6.10 ms for both masks; fp16: 6.03 against 6.35 ms).
// Numerics: Q, K, V are rounded to 16 bits (round to nearest even) by the converter, the probabilities P when they
//   become mma operands; products accumulate in fp32; the softmax (scale, masks, max, exp2, sums) is fp32. bf16 keeps
//   fp32's range with an 8-bit significand (unit round-off 2^-9); fp16 has 11 bits (2^-12) but overflows beyond
//   65504. Test bound, as flash_attention_bf16.cu: 2e-2 (bf16) / 4e-3 (fp16) relative Frobenius vs the double
//   reference (ParityCases.TILES_16_BIT).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common.cuh"  // the masking rule, unroll

// ---- 16-bit values ----

// two floats -> one 32-bit register of two 16-bit values (round to nearest even), lo in the low half
template <bool F16>
__device__ __forceinline__ uint32_t fa2_pack2(float lo, float hi) {
    if (F16) {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    } else {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    }
}

template <bool F16>
__device__ __forceinline__ unsigned short fa2_to16(float x) {
    if (F16) {
        __half v = __float2half_rn(x);
        return *reinterpret_cast<unsigned short*>(&v);
    } else {
        __nv_bfloat16 v = __float2bfloat16_rn(x);
        return *reinterpret_cast<unsigned short*>(&v);
    }
}

// out[i] = x[i] rounded to 16 bits, i < n; grid-stride, 4 values per step when the pointers allow it
template <bool F16>
__device__ __forceinline__ void convert16(const float* __restrict__ x, unsigned short* __restrict__ out, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool vec = ((uintptr_t)x & 15) == 0 && ((uintptr_t)out & 7) == 0;
    long long n4 = vec ? n / 4 : 0;
    for (long long i = i0; i < n4; i += stride) {
        float4 f = reinterpret_cast<const float4*>(x)[i];
        uint2 r;
        r.x = fa2_pack2<F16>(f.x, f.y);
        r.y = fa2_pack2<F16>(f.z, f.w);
        reinterpret_cast<uint2*>(out)[i] = r;
    }
    for (long long i = 4 * n4 + i0; i < n; i += stride) out[i] = fa2_to16<F16>(x[i]);
}

extern "C" __global__ void __launch_bounds__(256) f32_to_bf16(const float* __restrict__ x,
                                                              unsigned short* __restrict__ out, long long n) {
    convert16<false>(x, out, n);
}

extern "C" __global__ void __launch_bounds__(256) f32_to_f16(const float* __restrict__ x,
                                                             unsigned short* __restrict__ out, long long n) {
    convert16<true>(x, out, n);
}

// ---- shared memory, async copies, ldmatrix, mma ----

#ifdef ATTN_HOST_EMU  // the emulator's per-block dynamic shared memory (the launch's byte count)
#define FA2_DYNAMIC_SMEM(name) unsigned char* name = emu_dynamic_smem()
#else
#define FA2_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]
#endif

// the 32-bit shared-window address of a shared-memory pointer (the operand of cp.async and ldmatrix)
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
#ifdef ATTN_HOST_EMU
    return emu_smem_addr(p);
#else
    return (uint32_t)__cvta_generic_to_shared(p);
#endif
}

// 16 bytes global -> shared, asynchronously; srcBytes 0 writes 16 zero bytes (src is not read)
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int srcBytes) {
#ifdef ATTN_HOST_EMU
    emu_cp_async16(dst, src, srcBytes);
#else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(srcBytes));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#ifndef ATTN_HOST_EMU  // the emulator's copies are synchronous
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// waits until at most N of this thread's committed groups are still in flight
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifndef ATTN_HOST_EMU
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// four 8x8 16-bit matrices; lane 8 i + r gives the address of row r of matrix i; r[i] = this lane's fragment of
// matrix i (row lane / 4, columns 2 (lane % 4), + 1; with TRANS the matrix transposed)
template <bool TRANS>
__device__ __forceinline__ void ldsm_x4(uint32_t* r, uint32_t addr) {
#ifdef ATTN_HOST_EMU
    emu_ldmatrix(r, 4, TRANS, addr);
#else
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
#endif
}

// D (16x8, fp32) += A (16x16, row) . B (16x8, col), 16-bit inputs, fp32 accumulation
template <bool F16>
__device__ __forceinline__ void fa2_mma(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef ATTN_HOST_EMU
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

// byte offset of 16-byte chunk c of row r in a swizzled tile of D 16-bit values per row
template <int D>
__device__ __forceinline__ uint32_t swz(int r, int c) {
    return (uint32_t)((r * (D / 8) + (c ^ (r & 7))) * 16);
}

// rows row0 .. row0 + R - 1 of the (rows, D) 16-bit plane src into the swizzled tile at shared address s (cp.async;
// zeros past the last row), by the NTH threads of the block
template <int R, int D, int NTH>
__device__ __forceinline__ void fa2_load(uint32_t s, const unsigned short* __restrict__ src, int row0, int rows) {
    constexpr int CH = D / 8;
    static_assert((R * CH) % NTH == 0, "tile chunks per thread");
    UNROLL(i, R * CH / NTH) {
        int e = (int)threadIdx.x + i * NTH, r = e / CH, c = e % CH, row = row0 + r;
        bool in = row < rows;
        cp_async16(s + swz<D>(r, c), src + (size_t)(in ? row : 0) * D + c * 8, in ? 16 : 0);
    }
}

// ---- the kernel ----

template <int D, bool F16, int BR, int W, int BC>
__device__ __forceinline__ void fa2(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
                                    const unsigned short* __restrict__ v, float* __restrict__ o, int B, int H, int HKV, int L,
                                    int S, float scale, int causal, const float* __restrict__ mask, int maskKind,
                                    int maskStrideB, int maskStrideH, const float* __restrict__ kpm, int kpmKind,
                                    int winL, int winR) {
    constexpr int NTH = 32 * W;
    constexpr int RW = BR / W;   // query rows per warp
    constexpr int MT = RW / 16;  // m16 tiles per warp
    constexpr int KS = D / 16;   // k-steps of Q K^T
    constexpr int NT = BC / 8;   // n-tiles of S (8 keys each)
    constexpr int DT = D / 8;    // n-tiles of O (8 columns each)
    constexpr uint32_t QBYTES = BR * D * 2, KVBYTES = BC * D * 2;
    static_assert(RW % 16 == 0 && NT % 2 == 0 && DT % 2 == 0, "tile shapes");
    const float LOG2E = 1.4426950408889634f;

    FA2_DYNAMIC_SMEM(smem);  // Q (BR x D) | K buffers 0, 1 (BC x D) | V buffers 0, 1 (BC x D)
    const uint32_t sQ = smem_u32(smem), sK = sQ + QBYTES, sV = sK + 2 * KVBYTES;

    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    int tiles = (L + BR - 1) / BR;
    size_t bh = blockIdx.x / tiles;
    int q0 = (int)(blockIdx.x % tiles) * BR;
    int h = (int)(bh % H), b = (int)(bh / H);
    const unsigned short* qb = q + bh * L * D;
    size_t kvh = (size_t)b * HKV + h / (H / HKV);  // grouped-query attention: K/V head of query head h
    const unsigned short* kb = k + kvh * S * D;
    const unsigned short* vb = v + kvh * S * D;
    const float* mb = mask_row(mask, maskKind, b, h, 0, L, S, maskStrideB, maskStrideH);
    const float* kr = kpm_row(kpm, kpmKind, b, S);
    const bool anyMask = maskKind != MASK_NONE || kpmKind != MASK_NONE;
    const int w0 = q0 + warp * RW;  // the warp's first query row

    int jEnd = causal ? min(S, q0 + BR) : S;
    // a sliding window (keys i - winL .. i + winR): only the key tiles some row of the block sees, from jBegin
    jEnd = min(jEnd, q0 + BR + winR);  // no overflow: an open side is 2^30 - 1, L < 2^30
    const int jBegin = max(0, q0 - winL) / BC * BC;
    int nTiles = (jEnd - jBegin + BC - 1) / BC;

    // Q tile, then key tile 0, in flight together; Q into registers once its group has landed
    fa2_load<BR, D, NTH>(sQ, qb, q0, L);
    cp_async_commit();
    fa2_load<BC, D, NTH>(sK, kb, jBegin, S);
    fa2_load<BC, D, NTH>(sV, vb, jBegin, S);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    uint32_t qa[MT][KS][4];
    UNROLL(mt, MT) {
        UNROLL(ks, KS) {
            // matrices 0..3: rows 0-7 / 8-15 of the m-tile, columns ks*16 + 0-7 / 8-15 -> a0 a1 a2 a3
            int r = warp * RW + mt * 16 + (lane & 15), c = 2 * ks + (lane >> 4);
            ldsm_x4<false>(qa[mt][ks], sQ + swz<D>(r, c));
        }
    }

    float oacc[MT][DT][4];
    float mrow[MT][2], lrow[MT][2];  // running max (log2 domain) and per-lane partial sums of rows g, g + 8
    UNROLL(mt, MT) {
        UNROLL(dt, DT) { oacc[mt][dt][0] = oacc[mt][dt][1] = oacc[mt][dt][2] = oacc[mt][dt][3] = 0.f; }
        mrow[mt][0] = mrow[mt][1] = -CUDART_INF_F;
        lrow[mt][0] = lrow[mt][1] = 0.f;
    }

    for (int it = 0; it < nTiles; it++) {
        int j0 = jBegin + it * BC;
        if (it + 1 < nTiles) {  // the next tile into the other buffer (free since the end of the last iteration)
            uint32_t nb = ((it + 1) & 1) * KVBYTES;
            fa2_load<BC, D, NTH>(sK + nb, kb, j0 + BC, S);
            fa2_load<BC, D, NTH>(sV + nb, vb, j0 + BC, S);
        }
        cp_async_commit();  // possibly empty: the wait below then covers tile it all the same
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t kS = sK + (it & 1) * KVBYTES, vS = sV + (it & 1) * KVBYTES;

        // else every key of the tile lies after every row of this warp (causal or the window's right side), or before
        // (the window's left side)
        if (!(causal && j0 > w0 + RW - 1) && j0 <= w0 + RW - 1 + winR && j0 + BC - 1 >= w0 - winL) {
            float sc[MT][NT][4];
            UNROLL(mt, MT) {
                UNROLL(nt, NT) { sc[mt][nt][0] = sc[mt][nt][1] = sc[mt][nt][2] = sc[mt][nt][3] = 0.f; }
            }
            UNROLL(ks, KS) {
                UNROLL(np, NT / 2) {
                    // matrices: keys np*16 + 0-7 (d ks*16 + 0-7, 8-15) -> b0 b1 of n-tile 2np; keys + 8-15 -> 2np+1
                    uint32_t kf[4];
                    int r = np * 16 + (lane & 7) + ((lane >> 4) << 3), c = 2 * ks + ((lane >> 3) & 1);
                    ldsm_x4<false>(kf, kS + swz<D>(r, c));
                    UNROLL(mt, MT) {
                        fa2_mma<F16>(sc[mt][2 * np], qa[mt][ks], kf[0], kf[1]);
                        fa2_mma<F16>(sc[mt][2 * np + 1], qa[mt][ks], kf[2], kf[3]);
                    }
                }
            }
            // scale (log2 domain) and, where a key of the tile can be masked for a row of the warp, the masks
            bool needMask = anyMask || j0 + BC > S || (causal && j0 + BC - 1 > w0) || j0 < w0 + RW - 1 - winL
                            || j0 + BC - 1 > w0 + winR;
            if (needMask) {
                UNROLL(mt, MT) {
                    UNROLL(nt, NT) {
                        UNROLL(e, 4) {
                            int i = w0 + mt * 16 + g + (e >= 2 ? 8 : 0), j = j0 + nt * 8 + 2 * t + (e & 1);
                            float x = scale * sc[mt][nt][e];
                            // outside the window: j - i outside [-winL, winR], one unsigned compare
                            bool dead = j >= S || i >= L || (causal && j > i)
                                        || (unsigned)(j - i + winL) > (unsigned)(winL + winR);
                            APPLY_MASKS(x, dead, mb[MASK_AT(i, j, S, maskKind)], maskKind, kr[j], kpmKind);
                            sc[mt][nt][e] = dead ? -CUDART_INF_F : x * LOG2E;
                        }
                    }
                }
            } else {
                float sl = scale * LOG2E;
                UNROLL(mt, MT) {
                    UNROLL(nt, NT) {
                        UNROLL(e, 4) { sc[mt][nt][e] *= sl; }
                    }
                }
            }
            // online softmax per row: new max over the quad, rescale O and the sums, P = exp2(x - max)
            UNROLL(mt, MT) {
                float mx0 = mrow[mt][0], mx1 = mrow[mt][1];
                UNROLL(nt, NT) {
                    mx0 = fmaxf(mx0, fmaxf(sc[mt][nt][0], sc[mt][nt][1]));
                    mx1 = fmaxf(mx1, fmaxf(sc[mt][nt][2], sc[mt][nt][3]));
                }
#pragma unroll
                for (int off = 1; off < 4; off <<= 1) {  // the 4 lanes of a quad share rows g and g + 8
                    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
                    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
                }
                // a row with no live key yet keeps max -inf: subtract 0 instead (exp2(-inf) = 0 for its entries)
                float n0 = mx0 == -CUDART_INF_F ? 0.f : mx0, n1 = mx1 == -CUDART_INF_F ? 0.f : mx1;
                float c0 = exp2f(mrow[mt][0] - n0), c1 = exp2f(mrow[mt][1] - n1);
                mrow[mt][0] = mx0;
                mrow[mt][1] = mx1;
                float s0 = 0.f, s1 = 0.f;
                UNROLL(nt, NT) {
                    sc[mt][nt][0] = exp2f(sc[mt][nt][0] - n0);
                    sc[mt][nt][1] = exp2f(sc[mt][nt][1] - n0);
                    sc[mt][nt][2] = exp2f(sc[mt][nt][2] - n1);
                    sc[mt][nt][3] = exp2f(sc[mt][nt][3] - n1);
                    s0 += sc[mt][nt][0] + sc[mt][nt][1];
                    s1 += sc[mt][nt][2] + sc[mt][nt][3];
                }
                lrow[mt][0] = lrow[mt][0] * c0 + s0;
                lrow[mt][1] = lrow[mt][1] * c1 + s1;
                UNROLL(dt, DT) {
                    oacc[mt][dt][0] *= c0;
                    oacc[mt][dt][1] *= c0;
                    oacc[mt][dt][2] *= c1;
                    oacc[mt][dt][3] *= c1;
                }
            }
            // O += P V: the S accumulators of n-tiles 2kk, 2kk+1 are the A fragment of k-step kk
            UNROLL(kk, BC / 16) {
                uint32_t pa[MT][4];
                UNROLL(mt, MT) {
                    pa[mt][0] = fa2_pack2<F16>(sc[mt][2 * kk][0], sc[mt][2 * kk][1]);
                    pa[mt][1] = fa2_pack2<F16>(sc[mt][2 * kk][2], sc[mt][2 * kk][3]);
                    pa[mt][2] = fa2_pack2<F16>(sc[mt][2 * kk + 1][0], sc[mt][2 * kk + 1][1]);
                    pa[mt][3] = fa2_pack2<F16>(sc[mt][2 * kk + 1][2], sc[mt][2 * kk + 1][3]);
                }
                UNROLL(dp, DT / 2) {
                    // matrices (transposed): keys kk*16 + 0-7 / 8-15 of d columns dp*16 + 0-7 -> b0 b1 of d-tile
                    // 2dp; of columns dp*16 + 8-15 -> b0 b1 of d-tile 2dp+1
                    uint32_t vf[4];
                    int r = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), c = 2 * dp + (lane >> 4);
                    ldsm_x4<true>(vf, vS + swz<D>(r, c));
                    UNROLL(mt, MT) {
                        fa2_mma<F16>(oacc[mt][2 * dp], pa[mt], vf[0], vf[1]);
                        fa2_mma<F16>(oacc[mt][2 * dp + 1], pa[mt], vf[2], vf[3]);
                    }
                }
            }
        }
        __syncthreads();  // buffer it & 1 is no longer read: the next iteration's copy of tile it + 2 may fill it
    }

    UNROLL(mt, MT) {
        float l0 = lrow[mt][0], l1 = lrow[mt][1];
#pragma unroll
        for (int off = 1; off < 4; off <<= 1) {
            l0 += __shfl_xor_sync(0xffffffffu, l0, off);
            l1 += __shfl_xor_sync(0xffffffffu, l1, off);
        }
        float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;  // 0: every key masked
        int r0 = w0 + mt * 16 + g, r1 = r0 + 8;
        UNROLL(dt, DT) {
            int c = dt * 8 + 2 * t;
            if (r0 < L)
                *reinterpret_cast<float2*>(o + (bh * L + r0) * D + c) =
                    make_float2(oacc[mt][dt][0] * inv0, oacc[mt][dt][1] * inv0);
            if (r1 < L)
                *reinterpret_cast<float2*>(o + (bh * L + r1) * D + c) =
                    make_float2(oacc[mt][dt][2] * inv1, oacc[mt][dt][3] * inv1);
        }
    }
}

#define FA2_ENTRY(NAME, DIM, F16, BR, W, BC)                                                                         \
    extern "C" __global__ void __launch_bounds__(32 * W, 1)                                                         \
        NAME(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,                           \
             const unsigned short* __restrict__ v, float* __restrict__ o, int B, int H, int HKV, int L, int S, float scale,  \
             int causal, const float* __restrict__ mask, int maskKind, int maskStrideB, int maskStrideH,           \
             const float* __restrict__ kpm, int kpmKind, int winL, int winR) {                                     \
        fa2<DIM, F16, BR, W, BC>(q, k, v, o, B, H, HKV, L, S, scale, causal, mask, maskKind, maskStrideB,          \
                                 maskStrideH, kpm, kpmKind, winL, winR);                                           \
    }

// (name, D, fp16, BR, warps, BC): keep in sync with attention_variants.json and the Kernel enum
FA2_ENTRY(fa2_bf16_d64_br128_w8, 64, false, 128, 8, 64)
FA2_ENTRY(fa2_f16_d64_br128_w8, 64, true, 128, 8, 64)
FA2_ENTRY(fa2_bf16_d64_br128_w4, 64, false, 128, 4, 64)
FA2_ENTRY(fa2_f16_d64_br128_w4, 64, true, 128, 4, 64)
FA2_ENTRY(fa2_bf16_d64_br64_w4, 64, false, 64, 4, 64)
FA2_ENTRY(fa2_f16_d64_br64_w4, 64, true, 64, 4, 64)
FA2_ENTRY(fa2_bf16_d128_br128_w8, 128, false, 128, 8, 64)
FA2_ENTRY(fa2_f16_d128_br128_w8, 128, true, 128, 8, 64)
FA2_ENTRY(fa2_bf16_d128_br128_w8_bc32, 128, false, 128, 8, 32)
FA2_ENTRY(fa2_f16_d128_br128_w8_bc32, 128, true, 128, 8, 32)
FA2_ENTRY(fa2_bf16_d128_br64_w4, 128, false, 64, 4, 64)
FA2_ENTRY(fa2_f16_d128_br64_w4, 128, true, 64, 4, 64)
FA2_ENTRY(fa2_bf16_d128_br64_w4_bc32, 128, false, 64, 4, 32)
FA2_ENTRY(fa2_f16_d128_br64_w4_bc32, 128, true, 64, 4, 32)
