// cuda_emu.h -- just enough of CUDA C to run the engine's kernels on the host, for tests without a GPU.
// One fiber (ucontext, emu.cpp) per CUDA thread; a grid's blocks are shared out to a few OS threads, each running its
// blocks one after another, a block's fibers all on its OS thread. __shared__ becomes a function-local static
// thread_local (shared by the block's threads: one block runs at a time on each OS thread),
// __syncthreads a barrier over the block's fibers, __shfl_xor_sync an exchange through a per-warp slot with a per-warp
// barrier (full warps only). A fiber yields only at a barrier, so a block's threads interleave exactly at the
// synchronisation points. Exact enough to test indexing, masks and reductions.
#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <algorithm>
#include <cmath>
#include <functional>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
extern thread_local dim3 threadIdx;
extern thread_local dim3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))

void __syncthreads();
float __shfl_xor_sync(unsigned mask, float v, int laneMask);
int atomicCAS(int *address, int compare, int val);
using std::max;
using std::min;

// IEEE single-precision arithmetic rounded to nearest, never contracted (quantized.cu): on the host with SSE and ISO
// C++ (-std=c++20: no FP contraction) the plain operators are exactly that
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __int2float_rn(int v) { return (float)v; }

// runs body once per thread of every block of the grid (1-D blocks of bx threads)
void emu_run(int gx, int gy, int gz, int bx, const std::function<void()> &body);
// the same with smem bytes of dynamic shared memory per block (emu_dynamic_smem), filled with garbage (0xff) per block
void emu_run(int gx, int gy, int gz, int bx, int smem, const std::function<void()> &body);

// ---- flash_attention_fa2.cu: dynamic shared memory, its 32-bit addresses, cp.async and ldmatrix (emu.cpp) ----
// CUDA's 16-byte and 8-byte vector types, as far as the kernels use them
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
    unsigned x, y;
};
// the running block's dynamic shared memory (what extern __shared__ names on a GPU)
unsigned char *emu_dynamic_smem();
// a pointer into it as a 32-bit shared-window address (its offset); aborts for any other pointer
uint32_t emu_smem_addr(const void *p);
// cp.async.cg.shared.global 16 bytes: copies srcBytes (0 or 16) from src, zero-fills the rest (synchronous)
void emu_cp_async16(uint32_t dst, const void *src, int srcBytes);
// ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16 (warp-collective): r[0..num) of the calling lane
void emu_ldmatrix(uint32_t *r, int num, bool trans, uint32_t addr);

// a kernel argument passed as a 64-bit value: converts to any pointer type, or to long long
struct emu_u64 {
    long long v;
    template <class T> operator T *() const { return (T *)(intptr_t)v; }
    operator long long() const { return v; }
};
inline float emu_f32(long long bits) {
    int32_t b = (int32_t)bits;
    float f;
    __builtin_memcpy(&f, &b, 4);
    return f;
}
// included here, at global scope, so that a kernel file's own #include (inside its namespace) adds nothing
#include "cuda_bf16.h"
#include "cuda_fp16.h"

// tf32 tensor-core stand-ins (emu.cpp), used by flash_attention_tf32.cu under ATTN_HOST_EMU:
// cvt.rna.tf32.f32 (round to nearest, ties away from zero, to 10 stored mantissa bits; the result as fp32 bits with
// the low 13 bits zero) and the warp-collective mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (operands are
// tf32 bit patterns: only their top 19 bits are read).
uint32_t emu_cvt_rna_tf32(float x);
void emu_mma_m16n8k8_tf32(float *d, const uint32_t *a, uint32_t b0, uint32_t b1);
