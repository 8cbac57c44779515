// positional_encoding.cu -- y = x + PE, the sinusoidal encoding of positions offset .. offset+L-1.
//
// Shapes: x, y (B, L, E). PE[p, 2i] = sin(p * w_i), PE[p, 2i+1] = cos(p * w_i), w_i = 10000^(-2i/E)
//   (the "Attention Is All You Need" / PyTorch tutorial form; an odd E leaves the last column a sine).
// The angle and sin/cos are computed in double: p * w_i reaches thousands of radians, where a float angle
//   would lose ~1e-4 absolute; the result is rounded to float once.
// Launch: 1-D grid-stride loop over B*L*E; block = 256, grid = min(ceil(B*L*E / 256), 65535).
// Variants: offset > 0 for incremental decoding.

#include "common.cuh"  // next_idx

extern "C" __global__ void positional_encoding_f32(const float* __restrict__ x, float* __restrict__ y, int B, int L,
                                                   int E, int offset) {
    int total = B * L * E;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int e = idx % E;
        int l = (idx / E) % L;
        double p = (double)(offset + l);
        double w = exp(-(double)(e & ~1) * log(10000.0) / (double)E);
        double a = p * w;
        double pe = (e & 1) ? cos(a) : sin(a);
        y[idx] = (float)((double)x[idx] + pe);
    }
}
