// emu_selftest.cpp -- checks the emulator's barriers and its stand-ins for ldmatrix and cp.async (emu.cpp) against the
// PTX ISA's documented layouts, independently of any kernel; built with emu.cpp and run by EmulatorStandInsTest. Prints one line
// per failure and "ok <checks>" at the end; exit status 0 when every check passed.
//
// ldmatrix (PTX ISA, "Warp-level matrix load instruction: ldmatrix", section 9.7.14.5.15 in ISA 8.x, and its figure
// "ldmatrix fragment layout"): for .x1 / .x2 / .x4, threads 0-7 / 0-15 / 0-31 give the row addresses, lanes 8i..8i+7
// rows 0..7 of matrix i; each thread receives, per matrix, the two 16-bit elements (row laneid / 4, columns
// 2 (laneid % 4) and + 1), the first in the lower half. ".trans: the matrix is loaded in column-major format", so the
// thread receives elements (rows 2 (laneid % 4) and + 1, column laneid / 4) of the matrix as stored.
// mma.m16n8k16 fragments (section 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16 with floating point type"): A a0..a3
// = (g, 2t..), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..); B b0 = (k 2t.., n g), b1 = (k 2t + 8.., n g); C (g, 2t..),
// (g + 8, 2t..), g = laneid / 4, t = laneid % 4. The second part checks that ldmatrix.x4 of a row-major A, ldmatrix of
// a row-major (n, k) B (non-trans) and of a row-major (k, n) B (.trans) feed mma the products the flash kernel relies
// on.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_emu.h"

static int failures = 0, checks = 0;
static void expect(bool ok, const char *what, int a, int b, int c, unsigned got, unsigned want) {
    checks++;
    if (!ok && failures++ < 20)
        printf("FAIL %s (%d, %d, %d): got 0x%08x, want 0x%08x\n", what, a, b, c, got, want);
}

// element (i, r, c) of the test matrices: distinct 16-bit values
static uint16_t elem(int i, int r, int c) { return (uint16_t)(0x1000 * (i + 1) + 0x10 * r + c); }
// where row r of matrix i lives: a scattered 16-byte slot, so that only the per-lane addresses find it
static uint32_t rowAddr(int i, int r) { return (uint32_t)(((i * 8 + r) * 13 % 32) * 16); }

static void ldmatrixLayouts() {
    for (int num : {1, 2, 4})
        for (bool trans : {false, true}) {
            uint32_t got[32][4];
            emu_run(1, 1, 1, 32, 1024, [&] {
                int lane = threadIdx.x;
                unsigned char *s = emu_dynamic_smem();
                if (lane == 0)
                    for (int i = 0; i < 4; i++)
                        for (int r = 0; r < 8; r++)
                            for (int c = 0; c < 8; c++) {
                                uint16_t e = elem(i, r, c);
                                memcpy(s + rowAddr(i, r) + 2 * c, &e, 2);
                            }
                __syncthreads();
                // lanes past 8 num give an address that the instruction must ignore
                uint32_t a = lane < 8 * num ? emu_smem_addr(s + rowAddr(lane / 8, lane % 8)) : 512;
                uint32_t r[4] = {0, 0, 0, 0};
                emu_ldmatrix(r, num, trans, a);
                memcpy(got[lane], r, sizeof r);
            });
            for (int lane = 0; lane < 32; lane++)
                for (int i = 0; i < num; i++) {
                    int g = lane / 4, t = lane % 4;
                    uint32_t want = trans ? elem(i, 2 * t, g) | (uint32_t)elem(i, 2 * t + 1, g) << 16
                                          : elem(i, g, 2 * t) | (uint32_t)elem(i, g, 2 * t + 1) << 16;
                    expect(got[lane][i] == want, trans ? "ldmatrix.trans x{num} lane, matrix" : "ldmatrix x{num} lane, matrix",
                           num, lane, i, got[lane][i], want);
                }
        }
}

// small integers are exact in bf16; bits of bf16 value x
static uint16_t bf(int x) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static void ldmatrixFeedsMma() {
    // A (16 x 16) row-major; Kt (8 x 16: n rows of k) row-major; V (16 x 8: k rows of n) row-major
    int A[16][16], Kt[8][16], V[16][8];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++) A[r][c] = (r * 7 + c * 3) % 11 - 5;
    for (int n = 0; n < 8; n++)
        for (int k = 0; k < 16; k++) Kt[n][k] = (n * 5 + k) % 7 - 3;
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 8; n++) V[k][n] = (k * 3 + n * 2) % 9 - 4;
    float c1[32][4], c2[32][4];
    emu_run(1, 1, 1, 32, 1024, [&] {
        int lane = threadIdx.x;
        unsigned char *s = emu_dynamic_smem();
        const int AO = 0, KO = 512, VO = 768;  // byte offsets: A rows 32 bytes, Kt rows 32 bytes, V rows 16 bytes
        if (lane == 0) {
            for (int r = 0; r < 16; r++)
                for (int c = 0; c < 16; c++) {
                    uint16_t e = bf(A[r][c]);
                    memcpy(s + AO + 32 * r + 2 * c, &e, 2);
                }
            for (int n = 0; n < 8; n++)
                for (int k = 0; k < 16; k++) {
                    uint16_t e = bf(Kt[n][k]);
                    memcpy(s + KO + 32 * n + 2 * k, &e, 2);
                }
            for (int k = 0; k < 16; k++)
                for (int n = 0; n < 8; n++) {
                    uint16_t e = bf(V[k][n]);
                    memcpy(s + VO + 16 * k + 2 * n, &e, 2);
                }
        }
        __syncthreads();
        uint32_t a[4], kb[2], vb[2];
        // A: matrices rows 0-7 / 8-15 x columns 0-7, then the same x columns 8-15
        emu_ldmatrix(a, 4, false, AO + 32 * (lane & 15) + 16 * (lane >> 4));
        // B = Kt^T: matrix 0 = Kt rows (n) 0-7 x k 0-7, matrix 1 = k 8-15 (lanes 0-15 give the addresses)
        emu_ldmatrix(kb, 2, false, KO + 32 * (lane & 7) + 16 * ((lane >> 3) & 1));
        // B = V: matrix 0 = V rows (k) 0-7, matrix 1 = rows 8-15, transposed
        emu_ldmatrix(vb, 2, true, VO + 16 * (lane & 15));
        float d1[4] = {0, 0, 0, 0}, d2[4] = {0, 0, 0, 0};
        emu_mma_m16n8k16(d1, a, kb[0], kb[1], false);
        emu_mma_m16n8k16(d2, a, vb[0], vb[1], false);
        memcpy(c1[lane], d1, sizeof d1);
        memcpy(c2[lane], d2, sizeof d2);
    });
    for (int lane = 0; lane < 32; lane++)
        for (int e = 0; e < 4; e++) {
            int row = lane / 4 + (e >= 2 ? 8 : 0), col = 2 * (lane % 4) + (e & 1);
            int w1 = 0, w2 = 0;
            for (int k = 0; k < 16; k++) {
                w1 += A[row][k] * Kt[col][k];
                w2 += A[row][k] * V[k][col];
            }
            expect(c1[lane][e] == (float)w1, "A Kt^T via ldmatrix (lane, e, -)", lane, e, 0, (unsigned)(int)c1[lane][e],
                   (unsigned)w1);
            expect(c2[lane][e] == (float)w2, "A V via ldmatrix.trans (lane, e, -)", lane, e, 0,
                   (unsigned)(int)c2[lane][e], (unsigned)w2);
        }
}

static void cpAsync() {
    std::vector<unsigned char> src(32);
    for (int i = 0; i < 32; i++) src[i] = (unsigned char)(i + 1);
    unsigned char out[48];
    emu_run(1, 1, 1, 32, 64, [&] {
        unsigned char *s = emu_dynamic_smem();
        if (threadIdx.x == 0) {
            emu_cp_async16(emu_smem_addr(s), src.data(), 16);
            emu_cp_async16(emu_smem_addr(s + 16), src.data() + 16, 16);
            emu_cp_async16(emu_smem_addr(s + 32), src.data(), 0);  // src-size 0: zero fill, nothing read
            memcpy(out, s, 48);
        }
    });
    for (int i = 0; i < 48; i++)
        expect(out[i] == (i < 32 ? i + 1 : 0), "cp.async byte (i, -, -)", i, 0, 0, out[i], i < 32 ? i + 1 : 0);
}

// the block's threads interleave only at barriers (fibers, emu.cpp): after __syncthreads every thread sees every other
// thread's shared write; without it a thread reads its neighbour's slot before the neighbour ran, so a kernel that
// lacks a barrier fails deterministically instead of by chance
static void barriers() {
    setenv("EMU_THREADS", "1", 1);  // the two blocks in turn on one OS thread: the stale reads below depend on it
    for (bool sync : {true, false}) {
        static int got[64];
        emu_run(2, 1, 1, 64, [&] {
            __shared__ int s[64];
            s[threadIdx.x] = 1000 * blockIdx.x + threadIdx.x;
            if (sync) __syncthreads();
            got[threadIdx.x] = s[(threadIdx.x + 1) % 64];
            if (sync) __syncthreads();  // before the next block overwrites s
        });
        int wrong = 0;
        for (int t = 0; t < 64; t++) wrong += got[t] != 1000 + (t + 1) % 64;
        if (sync)
            expect(wrong == 0, "reads after __syncthreads", wrong, 0, 0, 0, 0);
        else
            expect(wrong >= 63, "reads without __syncthreads (stale)", wrong, 0, 0, 0, 0);
    }
}

// a grid's blocks on several OS threads (emu.cpp): every block runs once, with its own shared memory and barriers
static void blocksOnThreads() {
    setenv("EMU_THREADS", "4", 1);
    static int out[96][64];
    memset(out, 0, sizeof out);
    for (int round = 0; round < 3; round++) {  // the worker threads are reused across launches
        emu_run(8, 12, 1, 64, [&] {
            __shared__ int s[64];
            int b = blockIdx.y * 8 + blockIdx.x;
            s[threadIdx.x] = 1000 * b + threadIdx.x + round;
            __syncthreads();
            out[b][threadIdx.x] += s[(threadIdx.x + 1) % 64];
            __syncthreads();
        });
    }
    int wrong = 0;
    for (int b = 0; b < 96; b++)
        for (int t = 0; t < 64; t++) wrong += out[b][t] != 3 * (1000 * b + (t + 1) % 64) + 3;
    expect(wrong == 0, "96 blocks on 4 OS threads, 3 launches", wrong, 0, 0, 0, 0);
    setenv("EMU_THREADS", "2", 1);
}

int main() {
    barriers();
    blocksOnThreads();
    ldmatrixLayouts();
    ldmatrixFeedsMma();
    cpAsync();
    printf("%s %d checks, %d failures\n", failures ? "FAILED" : "ok", checks, failures);
    return failures ? 1 : 0;
}
