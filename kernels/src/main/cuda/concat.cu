// concat.cu -- concatenation along one axis, one launch per part.
//
// With the output viewed as (outer, total_axis * inner) and a part as (outer, part_axis * inner):
//   srcInner = part_axis * inner, dstInner = total_axis * inner, dstOffset = (sum of earlier parts' axis) * inner;
//   dst[o * dstInner + dstOffset + c] = src[o * srcInner + c].
// Launch: 1-D grid-stride loop over outer * srcInner; block = 256, grid = min(ceil(outer * srcInner / 256), 65535).
// Variants: none.

#include "common.cuh"  // next_idx

extern "C" __global__ void concat_f32(const float* __restrict__ src, float* __restrict__ dst, int outer,
                                      int srcInner, int dstInner, int dstOffset) {
    int total = outer * srcInner;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int o = idx / srcInner, c = idx - o * srcInner;
        dst[(size_t)o * dstInner + dstOffset + c] = src[idx];
    }
}
