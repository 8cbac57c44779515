// elementwise.cu -- the element-wise ops: ADD, SCALE, ADD_BIAS, RELU, GELU, SILU (and a GEMM's bias and activation).
//
// add_f32:   y = a + b               a, b, y any shape with n elements in all (equal shapes; no broadcasting)
// scale_f32: y = factor * x          x, y n elements
// bias_act_f32: y = act(x + bias + pre)    x, y (..., N) with n elements in all; bias (N) or null (cols = N gives the bias
//   index j % N). act: 0 none (ADD_BIAS), 1 ReLU, 2 GELU exact (0.5 v (1 + erf(v / sqrt 2))),
//   3 GELU tanh (0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), PyTorch approximate='tanh'), 4 SiLU (v / (1 + e^-v)).
// Launch: 1-D grid-stride loop; block = 256, grid = min(ceil(n / 256), 65535).
// Variants: ADD_BIAS = bias_act (bias, act 0); RELU / GELU / SILU = bias_act (no bias, act 1..4); bias + act fuses
//   Linear + activation (MATMUL's epilogue). In place is allowed in every kernel (y may alias an input: each element is
//   read, then written, by one thread).

#include "common.cuh"  // next_idx

extern "C" __global__ void add_f32(const float* a, const float* b, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i = next_idx(i, n)) y[i] = a[i] + b[i];
}

extern "C" __global__ void scale_f32(const float* x, float* y, int n, float factor) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i = next_idx(i, n)) y[i] = factor * x[i];
}

// x may be y (MATMUL's fused epilogue runs in place): each element is read, then written, by the same thread.
// pre (or null): an addend laid out like x, added after the bias and before the activation (a task adapter's low-rank
// product beside shared weights: MATMUL -> ADD_BIAS -> ADD -> act in one launch after the GEMM).
extern "C" __global__ void bias_act_f32(const float* x, const float* __restrict__ bias, const float* __restrict__ pre,
                                        float* y, int n, int cols, int act) {
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx = next_idx(idx, n)) {
        float v = x[idx];
        if (bias) v += bias[idx % cols];
        if (pre) v += pre[idx];
        switch (act) {
            case 1: v = v < 0.f ? 0.f : v; break;  // NaN stays NaN, as in PyTorch and the CPU backend
            case 2: v = 0.5f * v * (1.f + erff(v * 0.7071067811865476f)); break;
            case 3: {
                float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
                v = 0.5f * v * (1.f + tanhf(u));
                break;
            }
            case 4: v = v / (1.f + expf(-v)); break;  // SiLU; -inf gives -0
            default: break;
        }
        y[idx] = v;
    }
}
