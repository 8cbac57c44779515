// embedding.cu -- row lookup: y[t, :] = table[ids[t], :].
//
// Shapes: ids (...) with n elements, integral values stored as float; table (V, E); y (..., E).
// An id that is not an integer in [0, V) gives a zero row and records its position: err[0] is set to
//   (position + 1) of the first bad id seen (atomicCAS from 0); the host reads and clears it.
// Launch: 1-D grid-stride loop over n * E outputs; block = 256, grid = min(ceil(n * E / 256), 65535).
// Variants: none.

#include "common.cuh"  // next_idx

extern "C" __global__ void embedding_f32(const float* __restrict__ ids, const float* __restrict__ table,
                                         float* __restrict__ y, int n, int V, int E, int* err) {
    int total = n * E;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int t = idx / E, e = idx - t * E;
        float f = ids[t];
        bool ok = f >= 0.f && f < (float)V && f == floorf(f);
        if (ok) {
            y[idx] = table[(size_t)(int)f * E + e];
        } else {
            y[idx] = 0.f;
            if (e == 0 && err) atomicCAS(err, 0, t + 1);
        }
    }
}
