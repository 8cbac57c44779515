// layer_norm.cu -- LayerNorm over the last dimension, optional weight and bias (PyTorch semantics).
//
// Shapes: x, y (..., E) read as rows of E floats; weight, bias (E) or null.
//   y = (x - mean) / sqrt(var + eps) * weight + bias, var biased (divide by E), as torch.nn.LayerNorm.
// Launch: grid.x = rows (one block per row), block = 256 threads (multiple of 32, <= 1024), no dynamic shared
//   memory. Two passes (mean, then the centred sum of squares) for accuracy; x is re-read.
// Variants: weight and bias are independently optional (pass 0 for "none").

#include "common.cuh"  // block_sum

extern "C" __global__ void layer_norm_f32(const float* __restrict__ x, float* __restrict__ y,
                                          const float* __restrict__ weight, const float* __restrict__ bias, int E,
                                          float eps) {
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * E;
    float* yr = y + (size_t)blockIdx.x * E;
    float s = 0.f;
    for (int j = threadIdx.x; j < E; j += blockDim.x) s += xr[j];
    float mean = block_sum(s, red) / E;
    float q = 0.f;
    for (int j = threadIdx.x; j < E; j += blockDim.x) {
        float d = xr[j] - mean;
        q += d * d;
    }
    float var = block_sum(q, red) / E;
    float inv = 1.f / sqrtf(var + eps);
    for (int j = threadIdx.x; j < E; j += blockDim.x) {
        float v = (xr[j] - mean) * inv;
        if (weight) v *= weight[j];
        if (bias) v += bias[j];
        yr[j] = v;
    }
}
