// glu.cu -- gated linear unit of a fused up+gate projection (GLU): SwiGLU and GeGLU.
//
// x (rows, 2F), y (rows, F): y[r, j] = act(a) * g with a = x[r, j], g = x[r, F + j] when first != 0 (act on the
//   first half: ModernBERT's Wi, a Llama [gate; up] concatenation), else a = x[r, F + j], g = x[r, j] (GTE).
//   act: 2 GELU exact, 3 GELU tanh, 4 SiLU: the arithmetic of elementwise.cu's bias_act_f32 acts 2-4.
// Launch: 1-D grid-stride loop over rows * F; block = 256, grid = min(ceil(n / 256), 65535).
// Variants: none (y must not alias x).

#include "common.cuh"  // next_idx

extern "C" __global__ void glu_f32(const float* __restrict__ x, float* __restrict__ y, int rows, int F, int act,
                                   int first) {
    int n = rows * F;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx = next_idx(idx, n)) {
        int r = idx / F, j = idx - r * F;
        const float* xr = x + (size_t)r * 2 * F;
        float v = first ? xr[j] : xr[F + j], g = first ? xr[F + j] : xr[j];
        switch (act) {
            case 2: v = 0.5f * v * (1.f + erff(v * 0.7071067811865476f)); break;
            case 3: {
                float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
                v = 0.5f * v * (1.f + tanhf(u));
                break;
            }
            default: v = v / (1.f + expf(-v)); break;  // 4: SiLU
        }
        y[idx] = v * g;
    }
}
