// rms_norm.cu -- RMSNorm over the last dimension, optional weight (PyTorch's nn.RMSNorm, transformers' LlamaRMSNorm).
//
// Shapes: x, y (..., E) read as rows of E floats; weight (E) or null.
//   y = x / sqrt(mean(x^2) + eps) * weight, in float32 (as LlamaRMSNorm computes it): (x * inv) * weight.
// Launch: grid.x = rows (one block per row), block = 256 threads (multiple of 32, <= 1024), no dynamic shared
//   memory. One pass for the sum of squares (block_sum), then the scaled row; x is re-read.
// Variants: weight optional (pass 0 for "none").

#include "common.cuh"  // block_sum

extern "C" __global__ void rms_norm_f32(const float* __restrict__ x, float* __restrict__ y,
                                        const float* __restrict__ weight, int E, float eps) {
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * E;
    float* yr = y + (size_t)blockIdx.x * E;
    float q = 0.f;
    for (int j = threadIdx.x; j < E; j += blockDim.x) q += xr[j] * xr[j];
    float ms = block_sum(q, red) / E;
    float inv = 1.f / sqrtf(ms + eps);
    for (int j = threadIdx.x; j < E; j += blockDim.x) {
        float v = xr[j] * inv;
        if (weight) v *= weight[j];
        yr[j] = v;
    }
}
