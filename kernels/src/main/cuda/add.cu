// add.cu -- element-wise residual add and scale.
//
// Shapes: a, b, x, y any shape with n elements in all (equal shapes; no broadcasting).
//   add_f32:   y = a + b
//   scale_f32: y = factor * x
// Launch: 1-D grid-stride loop; block = 256, grid = min(ceil(n / 256), 65535).
// Variants: in place is allowed (y may alias an input: each element is read then written by one thread).

#include "common.cuh"  // next_idx

extern "C" __global__ void add_f32(const float* a, const float* b, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i = next_idx(i, n)) y[i] = a[i] + b[i];
}

extern "C" __global__ void scale_f32(const float* x, float* y, int n, float factor) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i = next_idx(i, n)) y[i] = factor * x[i];
}
