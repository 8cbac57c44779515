// quantized.cu -- the int8 ops of ONNX Runtime's dynamic quantization (issue 37): QEMBEDDING's lookup, and QMATMUL as
// DynamicQuantizeLinear of the activations (per row group) then MatMulInteger's exact int32 product and its float scale.
// The arithmetic is the definition's, as the CPU backend and the double reference compute it (OpParams.QMatMul), so
// the results are bit for bit theirs: float32 division and round-half-to-even (__fdiv_rn, rintf), exact integers, one
// float product per output (__fmul_rn: nothing for nvcc to contract).
//
// qembedding_i8: y[t, e] = (float) (table[ids[t], e] - zero) * scale. ids (n) integral values stored as float, table
//   int8 (V, E). A bad id gives a zero row and records (position + 1) in err[0] (atomicCAS from 0), as embedding_f32.
//   Launch: 1-D grid-stride over n * E; block 256.
// qrange_f32: per row of x (rows, K): lohi[2 r] = min(0, min x[r, :]), lohi[2 r + 1] = max(0, max x[r, :]).
//   Launch: one block per row (gridDim.x = rows), blockDim a multiple of 32 up to 256.
// qparams_f32: per row group g, groupRows consecutive rows, or with starts (groups + 1 values, as floats: exact to
//   2^24) the rows [starts[g], starts[g + 1]) (a ragged batch's sequences): the range over its rows that pad does not
//   mark (pad (rows) or null; non-zero: a padding row of a padded batch, quantized with its group but not in its
//   range), then scale = hi == lo ? 1 : (hi - lo) / 255 and zero = rint(clamp(0 - lo / scale, 0, 255)): sz[2 g],
//   sz[2 g + 1]. Launch: 1-D grid-stride over the groups.
// qquantize_f32: q[r, k] = clamp(rint(x[r, k] / scale), -zero, 255 - zero) (= the uint8 value less the zero point,
//   in [-255, 255], as int16) with its group's scale and zero (the group r / groupRows, or rowGroup[r] when rowGroup
//   is not null); rowScale[r] = scale. Launch: 1-D grid-stride over rows * K.
// qgemm_i8: C (M, N) = (float) acc * (rowScale[m] * bscale[n]), acc = sum_k q[m, k] * (B[k, n] - bzero[n]) in int32
//   (exact while K * 255 * 255 < 2^31: K <= 33025); B int8 (K, N) row-major (MatMulInteger's B), bscale and bzero one
//   value (nscale / nzero 1) or one per column. Launch: block 256 threads (16 x 16), each a 4 x 4 sub-tile of a
//   64 x 64 C tile; grid (ceil(N / 64), ceil(M / 64)); K in steps of 16 through shared memory. Integer multiply-adds
//   on the SIMT cores (no dp4a or IMMA tensor cores: the zero-point-shifted operands span 9 bits).
// Variants: none.

#include "common.cuh"  // next_idx, UNROLL

extern "C" __global__ void qembedding_i8(const float* __restrict__ ids, const signed char* __restrict__ table,
                                         float* __restrict__ y, int n, int V, int E, float scale, int zero, int* err) {
    int total = n * E;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx = next_idx(idx, total)) {
        int t = idx / E, e = idx - t * E;
        float f = ids[t];
        bool ok = f >= 0.f && f < (float)V && f == floorf(f);
        if (ok) {
            y[idx] = __fmul_rn((float)((int)table[(size_t)(int)f * E + e] - zero), scale);
        } else {
            y[idx] = 0.f;
            if (e == 0 && err) atomicCAS(err, 0, t + 1);
        }
    }
}

extern "C" __global__ void qrange_f32(const float* __restrict__ x, float* __restrict__ lohi, int rows, int K) {
    __shared__ float red[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * K;
    float lo = 0.f, hi = 0.f;  // the range always holds 0
    for (int i = threadIdx.x; i < K; i += blockDim.x) {
        lo = fminf(lo, xr[i]);
        hi = fmaxf(hi, xr[i]);
    }
    hi = block_max(hi, red);
    lo = -block_max(-lo, red);  // negation is exact: the min
    if (threadIdx.x == 0) {
        lohi[2 * r] = lo;
        lohi[2 * r + 1] = hi;
    }
}

extern "C" __global__ void qparams_f32(const float* __restrict__ lohi, const float* __restrict__ pad,
                                       const float* __restrict__ starts, float* __restrict__ sz, int groups,
                                       int groupRows) {
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g = next_idx(g, groups)) {
        float lo = 0.f, hi = 0.f;
        int r0 = starts ? (int)starts[g] : g * groupRows, r1 = starts ? (int)starts[g + 1] : (g + 1) * groupRows;
        for (int r = r0; r < r1; r++) {
            if (pad && pad[r] != 0.f) continue;
            lo = fminf(lo, lohi[2 * r]);
            hi = fmaxf(hi, lohi[2 * r + 1]);
        }
        float scale = hi == lo ? 1.f : __fdiv_rn(__fsub_rn(hi, lo), 255.f);
        float z = __fsub_rn(0.f, __fdiv_rn(lo, scale));
        sz[2 * g] = scale;
        sz[2 * g + 1] = rintf(fmaxf(0.f, fminf(255.f, z)));
    }
}

extern "C" __global__ void qquantize_f32(const float* __restrict__ x, const float* __restrict__ sz,
                                         const float* __restrict__ rowGroup, short* __restrict__ q,
                                         float* __restrict__ rowScale, int rows, int K, int groupRows) {
    long long total = (long long)rows * K;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int r = (int)(i / K), g = rowGroup ? (int)rowGroup[r] : r / groupRows;
        float scale = sz[2 * g], zero = sz[2 * g + 1];
        float v = rintf(__fdiv_rn(x[i], scale));
        v = fminf(fmaxf(v, -zero), 255.f - zero);
        q[i] = (short)(int)v;
        if (i - (long long)r * K == 0) rowScale[r] = scale;
    }
}

#define QBM 64
#define QBN 64
#define QBK 16

extern "C" __global__ void __launch_bounds__(256)
    qgemm_i8(const short* __restrict__ A, const signed char* __restrict__ B, const signed char* __restrict__ bzero,
             int nzero, const float* __restrict__ bscale, int nscale, const float* __restrict__ rowScale,
             float* __restrict__ C, int M, int N, int K) {
    __shared__ int As[QBK][QBM + 1];
    __shared__ int Bs[QBK][QBN + 1];
    int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    int m0 = blockIdx.y * QBM, n0 = blockIdx.x * QBN;
    int acc[4][4];
    UNROLL(i, 4)
        UNROLL(j, 4) acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += QBK) {
        UNROLL(r, 4) {
            int li = tid + 256 * r;  // 0 .. 1023 = QBM * QBK
            int mm = li / QBK, kk = li % QBK, gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = gm < M && gk < K ? (int)A[(size_t)gm * K + gk] : 0;
            kk = li / QBN;
            int nn = li % QBN, gn = n0 + nn;
            gk = k0 + kk;
            Bs[kk][nn] = gn < N && gk < K ? (int)B[(size_t)gk * N + gn] - (int)bzero[nzero == 1 ? 0 : gn] : 0;
        }
        __syncthreads();
        UNROLL(kk, QBK) {
            int a[4], b[4];
            UNROLL(i, 4) a[i] = As[kk][ty + 16 * i];
            UNROLL(j, 4) b[j] = Bs[kk][tx + 16 * j];
            UNROLL(i, 4)
                UNROLL(j, 4) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    UNROLL(i, 4) {
        int gm = m0 + ty + 16 * i;
        if (gm >= M) continue;
        float rs = rowScale[gm];
        UNROLL(j, 4) {
            int gn = n0 + tx + 16 * j;
            if (gn >= N) continue;
            float s = __fmul_rn(rs, bscale[nscale == 1 ? 0 : gn]);
            C[(size_t)gm * N + gn] = __fmul_rn(__int2float_rn(acc[i][j]), s);
        }
    }
}
