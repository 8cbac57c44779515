// gemm.cu -- tiled shared-memory SGEMM, the fallback when no cuBLAS library can be loaded.
//
// Row-major, batched with strides: for each batch z,
//   C_z (M, N) = alpha * op(A_z) (M, K) . op(B_z) (K, N) + beta * C_z
//   op(A)[m, k] = transA ? A[k * lda + m] : A[m * lda + k]     (A stored (K, M) when transposed)
//   op(B)[k, n] = transB ? B[n * ldb + k] : B[k * ldb + n]     (B stored (N, K) when transposed)
//   A_z = A + z * strideA (strideB = 0 shares one B across the batch), C_z = C + z * strideC, ldc = row stride.
//   beta == 0 never reads C (so garbage or NaN in C does not leak through).
// Launch: block = 256 threads (16 x 16), each computing a 4 x 4 sub-tile of a 64 x 64 C tile;
//   grid = (ceil(N / 64), ceil(M / 64), min(batch, 65535)); blocks loop over z when batch > 65535.
//   Static shared memory: 2 * 16 * (64 + 1) floats; K is walked in steps of 16.
// Variants: all four transA/transB combinations in one entry; tile loads are coalesced along the stored
//   row for each layout. Accumulation is float32 FMA in k order (no tensor cores, no TF32).

#include "common.cuh"  // UNROLL

#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void __launch_bounds__(256) gemm_f32(const float* __restrict__ A, const float* __restrict__ B,
                                                           float* __restrict__ C, int M, int N, int K, int transA,
                                                           int transB, int lda, int ldb, int ldc, long long strideA,
                                                           long long strideB, long long strideC, int batch,
                                                           float alpha, float beta) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    for (int z = blockIdx.z; z < batch; z += gridDim.z) {
        const float* Az = A + z * strideA;
        const float* Bz = B + z * strideB;
        float* Cz = C + z * strideC;
        float acc[4][4];
        UNROLL(i, 4)
            UNROLL(j, 4) acc[i][j] = 0.f;

        for (int k0 = 0; k0 < K; k0 += BK) {
            UNROLL(r, 4) {
                int li = tid + 256 * r;  // 0 .. 1023 = BM * BK
                int mm, kk;
                if (transA) { kk = li / BM; mm = li % BM; } else { mm = li / BK; kk = li % BK; }
                int gm = m0 + mm, gk = k0 + kk;
                float v = 0.f;
                if (gm < M && gk < K) v = transA ? Az[(size_t)gk * lda + gm] : Az[(size_t)gm * lda + gk];
                As[kk][mm] = v;
                int nn;
                if (transB) { nn = li / BK; kk = li % BK; } else { kk = li / BN; nn = li % BN; }
                int gn = n0 + nn;
                gk = k0 + kk;
                v = 0.f;
                if (gn < N && gk < K) v = transB ? Bz[(size_t)gn * ldb + gk] : Bz[(size_t)gk * ldb + gn];
                Bs[kk][nn] = v;
            }
            __syncthreads();
            UNROLL(kk, BK) {
                float a[4], b[4];
                UNROLL(i, 4) a[i] = As[kk][ty + 16 * i];
                UNROLL(j, 4) b[j] = Bs[kk][tx + 16 * j];
                UNROLL(i, 4)
                    UNROLL(j, 4) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
            __syncthreads();
        }
        UNROLL(i, 4) {
            int gm = m0 + ty + 16 * i;
            if (gm >= M) continue;
            UNROLL(j, 4) {
                int gn = n0 + tx + 16 * j;
                if (gn >= N) continue;
                float* c = Cz + (size_t)gm * ldc + gn;
                *c = beta == 0.f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
            }
        }
    }
}
