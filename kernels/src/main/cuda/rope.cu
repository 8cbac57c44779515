// rope.cu -- rotary position embedding (ROPE), transformers' rotate-half layout.
//
// x, y (B, H, L, D); the first R = rotary dims rotate, pair i < R/2 being (i, i + R/2):
//   y[i] = x[i] c - x[i + R/2] s,  y[i + R/2] = x[i + R/2] c + x[i] s;  dims R .. D-1 are copied.
// Position of token (b, l): mode 0: offset + l; mode 1: offset + pos[0] + l (a runtime start); mode 2: offset +
//   pos[b * L + l] (per-row position ids, (B, L)); integral values stored as float. A position that is not an integer
//   in [0, 2^24] makes that token's rotated dims NaN (the host checks none of them: the values live on the device).
// Angle: the float32 product (float)p * inv_i with inv_i = 1 / theta^(2i / R) rounded as transformers computes it in
//   float32 (exponent a float division, the power rounded from double, the reciprocal a float division:
//   OpParams.Rope.invFreq); c and s are cos and sin of that float angle in double, rounded once.
// Scaling (OpParams.Rope.Scaling.apply, the same float32 operations in the same order): skind 0 none; 1 linear
//   (inv / factor); 2 llama3: wavelen = (1 / inv) * 2pi, divided by factor above lowWl, kept below highWl, blended
//   between with smooth = ((1 / wavelen) * orig - lowF) / hmlF. The host rounds lowWl, highWl, orig, lowF and hmlF
//   (high - low) to float as torch rounds those Python scalars.
// Launch: 1-D grid-stride loop over B*L*(R/2) pairs (each applies its cos and sin to the H heads) and then over the
//   B*H*L*(D-R) copied values; block = 256, grid = min(ceil(n / 256), 65535) for n the larger of the two counts.
// Variants: none (y must not alias x).

#include "common.cuh"  // next_idx

extern "C" __global__ void rope_f32(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ pos,
                                    int B, int H, int L, int D, int R, float theta, int offset, int mode,
                                    int skind, float factor, float lowWl, float highWl, float orig, float lowF,
                                    float hmlF) {
    int half = R / 2;
    int pairs = B * L * half;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < pairs; idx = next_idx(idx, pairs)) {
        int i = idx % half, l = (idx / half) % L, b = idx / (half * L);
        double p = (double)offset + (mode == 0 ? (double)l : mode == 1 ? (double)pos[0] + l : (double)pos[b * L + l]);
        float c, s;
        if (!(p >= 0.0 && p <= 16777216.0) || p != floor(p)) {
            c = s = nanf("");
        } else {
            float e = (float)(2 * i) / (float)R;
            float inv = 1.f / (float)pow((double)theta, (double)e);
            if (skind == 1) {
                inv = inv / factor;
            } else if (skind == 2) {
                float wavelen = (1.f / inv) * 6.2831855f;  // (float)(2 pi)
                bool lo = wavelen > lowWl, hi = wavelen < highWl;
                float scaled = lo ? inv / factor : inv;
                if (!lo && !hi) {
                    float smooth = ((1.f / wavelen) * orig - lowF) / hmlF;
                    scaled = (1.f - smooth) * scaled / factor + smooth * scaled;
                }
                inv = scaled;
            }
            double a = (double)((float)p * inv);
            c = (float)cos(a);
            s = (float)sin(a);
        }
        for (int h = 0; h < H; h++) {
            size_t o = (((size_t)b * H + h) * L + l) * D;
            float x1 = x[o + i], x2 = x[o + half + i];
            y[o + i] = x1 * c - x2 * s;
            y[o + half + i] = x2 * c + x1 * s;
        }
    }
    int rest = D - R, copies = B * H * L * rest;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < copies; idx = next_idx(idx, copies)) {
        int row = idx / rest, d = R + idx % rest;
        y[(size_t)row * D + d] = x[(size_t)row * D + d];
    }
}
