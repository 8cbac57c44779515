// mean.cu -- mean over one axis.
//
// Shapes: x viewed as (outer, len, inner), y (outer, inner): y[o, i] = (1/len) sum_k x[o, k, i].
//   e.g. averaging attention weights (B, H, L, S) over heads: outer = B, len = H, inner = L*S.
// Accumulates in float, in a fixed order (deterministic). Two layouts:
//   inner > 1: one thread per output, summing k in index order; neighbouring threads read neighbouring i
//     (coalesced). Launch: 1-D grid-stride loop over outer * inner; block = 256, grid = min(ceil(outer * inner / 256),
//     65535).
//   inner == 1 (the mean over the last axis, e.g. bench attention --resident's (B, H, L, D) -> (B, H, L)): one warp
//     per row; lane l sums x[o, l], x[o, l + 32], ... (each warp load reads 32 consecutive floats: coalesced, where
//     one thread per row would read 32 rows len floats apart), then a butterfly shuffle sum (warp_sum). Launch: the
//     host asks for 32 * outer threads (block = 256, grid = min(ceil(32 * outer / 256), 65535)); warps stride over
//     the rows.
// Variants: none.

#include "common.cuh"  // next_idx, warp_sum

extern "C" __global__ void mean_f32(const float* __restrict__ x, float* __restrict__ y, int outer, int len,
                                    int inner) {
    if (inner == 1) {  // one warp per row (warp-uniform loop: every lane of a warp has the same o)
        int lane = threadIdx.x & 31;
        int warps = (gridDim.x * blockDim.x) >> 5;
        for (int o = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < outer; o = outer - o > warps ? o + warps : outer) {
            const float* p = x + (size_t)o * len;
            float s = 0.f;
            for (int k = lane; k < len; k += 32) s += p[k];
            s = warp_sum(s);
            if (lane == 0) y[o] = len > 0 ? s / len : 0.f;
        }
        return;
    }
    int total = outer * inner;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int o = idx / inner, i = idx - o * inner;
        const float* p = x + (size_t)o * len * inner + i;
        float s = 0.f;
        for (int k = 0; k < len; k++) s += p[(size_t)k * inner];
        y[idx] = len > 0 ? s / len : 0.f;
    }
}
