// heads.cu -- split and merge attention heads (pure permutations).
//
// split_heads_f32: x (B, L, H*D) -> y (B, H, L, D),  y[b,h,l,d] = x[b,l,h*D+d]
// merge_heads_f32: x (B, H, L, D) -> y (B, L, H*D),  y[b,l,h*D+d] = x[b,h,l,d]
// ragged_to_padded_f32: x (H, T, D) holding sequences one after another -> y (N, H, Lp, D), N of them picked by seqs
//   (2N floats: sequence n's first row in x, then its length <= Lp): y[n,h,t,d] = t < len_n ? x[h, start_n + t, d] : 0
// padded_to_ragged_f32: the inverse, x (N, H, Lp, D) -> y (H, T, D): y[h, start_n + t, d] = x[n,h,t,d] for t < len_n
//   (the rows of y no picked sequence holds are not written). seqs' values are exact integers below 2^24 (a ragged
//   batch's positions). The CUDA backend runs a ragged batch's attention as padded groups of sequences of similar
//   lengths between these two (ops/Attention.java).
// Launch: 1-D grid-stride loop over the outputs (split/merge: writes coalesced, reads strided by D);
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

// Where element idx of the padded (N, H, Lp, D) layout lies in the ragged (H, T, D) one, or -1 past its sequence's
// length (seqs as above).
__device__ __forceinline__ long long ragged_offset(int idx, const float* __restrict__ seqs, int H, int T, int Lp,
                                                   int D) {
    int d = idx % D;
    int t = (idx / D) % Lp;
    int h = (idx / (D * Lp)) % H;
    int n = idx / (D * Lp * H);
    int s0 = (int)seqs[2 * n], len = (int)seqs[2 * n + 1];
    return t < len ? ((long long)h * T + s0 + t) * D + d : -1;
}

extern "C" __global__ void ragged_to_padded_f32(const float* __restrict__ x, float* __restrict__ y,
                                                const float* __restrict__ seqs, int N, int H, int T, int Lp, int D) {
    int total = N * H * Lp * D;  // the host keeps both sizes under 2^31
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        long long at = ragged_offset(idx, seqs, H, T, Lp, D);
        y[idx] = at >= 0 ? x[at] : 0.f;
    }
}

extern "C" __global__ void padded_to_ragged_f32(const float* __restrict__ x, float* __restrict__ y,
                                                const float* __restrict__ seqs, int N, int H, int T, int Lp, int D) {
    int total = N * H * Lp * D;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        long long at = ragged_offset(idx, seqs, H, T, Lp, D);
        if (at >= 0) y[at] = x[idx];
    }
}
