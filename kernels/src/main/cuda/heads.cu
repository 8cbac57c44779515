// heads.cu -- split and merge attention heads (pure permutations).
//
// split_heads_f32: x (B, L, H*D) -> y (B, H, L, D),  y[b,h,l,d] = x[b,l,h*D+d]
// merge_heads_f32: x (B, H, L, D) -> y (B, L, H*D),  y[b,l,h*D+d] = x[b,h,l,d]
// Launch: 1-D grid-stride loop over the B*H*L*D outputs (writes coalesced, reads strided by D);
//   block = 256, grid = min(ceil(total / 256), 65535).
// Variants: none.

#include "common.cuh"  // next_idx

extern "C" __global__ void split_heads_f32(const float* __restrict__ x, float* __restrict__ y, int B, int L, int H,
                                           int D) {
    int total = B * H * L * D;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int d = idx % D;
        int l = (idx / D) % L;
        int h = (idx / (D * L)) % H;
        int b = idx / (D * L * H);
        y[idx] = x[((size_t)b * L + l) * (H * D) + h * D + d];
    }
}

extern "C" __global__ void merge_heads_f32(const float* __restrict__ x, float* __restrict__ y, int B, int H, int L,
                                           int D) {
    int total = B * H * L * D;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int d = idx % D;
        int h = (idx / D) % H;
        int l = (idx / (D * H)) % L;
        int b = idx / (D * H * L);
        y[idx] = x[(((size_t)b * H + h) * L + l) * D + d];
    }
}
