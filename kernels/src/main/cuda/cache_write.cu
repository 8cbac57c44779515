// cache_write.cu -- key/value cache write for incremental decoding (CACHE_WRITE).
//
// cache (B*H, C, D), x (B*H, L, D), pos[0] = p (integral, as float): rows p .. p+L-1 of every (b, h) take x's rows.
// cache_write_f32 with copy_all == 0 writes only those rows of y (y is the cache itself: the executor's in-place case,
//   so cache and y may alias and carry no __restrict__); grid-stride loop over the B*H*L*D new values.
// copy_all != 0: y is a distinct buffer; every element of y is written (x's rows or the cache's), grid-stride loop over
//   B*H*C*D.
// A position outside [0, C - L] (or not an integer) writes nothing; the host checks positions before launching.
// Launch: block = 256, grid = min(ceil(total / 256), 65535).
// Variants: none.

#include "common.cuh"  // next_idx

extern "C" __global__ void cache_write_f32(const float* cache, const float* __restrict__ x,
                                           const float* __restrict__ pos, float* y, int BH, int C, int L, int D,
                                           int copy_all) {
    float pf = pos[0];
    if (!(pf >= 0.f && pf + (float)L <= (float)C) || pf != floorf(pf)) return;
    int p = (int)pf;
    if (copy_all) {
        int total = BH * C * D;
        for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
            int r = (idx / D) % C;
            if (r >= p && r < p + L) {
                int bh = idx / (D * C), d = idx % D;
                y[idx] = x[((size_t)bh * L + (r - p)) * D + d];
            } else {
                y[idx] = cache[idx];
            }
        }
    } else {
        int total = BH * L * D;
        for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
            int d = idx % D, r = (idx / D) % L, bh = idx / (D * L);
            y[((size_t)bh * C + p + r) * D + d] = x[idx];
        }
    }
}
