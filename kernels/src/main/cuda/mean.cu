// mean.cu -- mean over one axis.
//
// Shapes: x viewed as (outer, len, inner), y (outer, inner): y[o, i] = (1/len) sum_k x[o, k, i].
//   e.g. averaging attention weights (B, H, L, S) over heads: outer = B, len = H, inner = L*S.
// Accumulates in float, one thread per output, in index order (deterministic).
// Launch: 1-D grid-stride loop over outer * inner; block = 256, grid = min(ceil(outer * inner / 256), 65535).
// Variants: none.

#include "common.cuh"  // next_idx

extern "C" __global__ void mean_f32(const float* __restrict__ x, float* __restrict__ y, int outer, int len,
                                    int inner) {
    int total = outer * inner;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int o = idx / inner, i = idx - o * inner;
        const float* p = x + (size_t)o * len * inner + i;
        float s = 0.f;
        for (int k = 0; k < len; k++) s += p[(size_t)k * inner];
        y[idx] = len > 0 ? s / len : 0.f;
    }
}
