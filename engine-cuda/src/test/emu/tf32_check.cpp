// tf32_check.cpp -- checks the emulator's tf32 stand-ins (emu.cpp) against the PTX ISA, independently of any kernel:
// cvt.rna.tf32.f32 on hand-picked bit patterns (ties away from zero, carries, signs, inf/NaN), and the warp-collective
// mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32 on matrices of distinct values distributed by the ISA's fragment layouts
// (written out again here, not taken from emu.cpp), with operands whose low 13 bits are set (the tensor core must
// ignore them). Built with emu.cpp by Tf32EmulatorTest; prints "ok N" or the first mismatches, exits non-zero on any.
#include <stdio.h>
#include <string.h>

#include <cmath>

#include "cuda_emu.h"

static int failures = 0, checks = 0;

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float fl(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void expectBits(const char *what, uint32_t got, uint32_t want) {
    checks++;
    if (got != want) {
        failures++;
        printf("FAIL %s: got 0x%08x want 0x%08x\n", what, got, want);
    }
}

static void cvtChecks() {
    // 1 + 2^-11 is half a tf32 ulp above 1: a tie, rounded away from zero to 1 + 2^-10
    expectBits("tie up", emu_cvt_rna_tf32(fl(0x3f801000u)), 0x3f802000u);
    expectBits("tie up, negative", emu_cvt_rna_tf32(fl(0xbf801000u)), 0xbf802000u);
    // a tie whose kept part is odd also goes away from zero (not to even)
    expectBits("tie, odd", emu_cvt_rna_tf32(fl(0x3f803000u)), 0x3f804000u);
    expectBits("below half", emu_cvt_rna_tf32(fl(0x3f800fffu)), 0x3f800000u);
    expectBits("above half", emu_cvt_rna_tf32(fl(0x3f801001u)), 0x3f802000u);
    expectBits("exact", emu_cvt_rna_tf32(1.5f), bits(1.5f));
    // mantissa all ones rounds into the exponent: 2 - 2^-23 -> 2
    expectBits("carry into exponent", emu_cvt_rna_tf32(fl(0x3fffffffu)), 0x40000000u);
    expectBits("zero", emu_cvt_rna_tf32(0.f), 0u);
    expectBits("negative zero", emu_cvt_rna_tf32(-0.f), 0x80000000u);
    expectBits("inf", emu_cvt_rna_tf32(INFINITY), 0x7f800000u);
    expectBits("-inf", emu_cvt_rna_tf32(-INFINITY), 0xff800000u);
    uint32_t n = emu_cvt_rna_tf32(fl(0x7f800001u));  // a NaN whose payload sits in the dropped bits
    checks++;
    if (!std::isnan(fl(n)) || (n & 0x1fffu)) {
        failures++;
        printf("FAIL NaN: got 0x%08x\n", n);
    }
    // the largest finite float rounds up to inf (ties away from zero, like any overflowing round to nearest)
    expectBits("overflow", emu_cvt_rna_tf32(fl(0x7f7fffffu)), 0x7f800000u);
    // a subnormal keeps its top 10 stored bits, rounded
    expectBits("subnormal", emu_cvt_rna_tf32(fl(0x00001fffu)), 0x00002000u);
    // every result has its low 13 bits zero, and differs from x by at most half a tf32 ulp
    for (uint32_t u = 0x3f800000u; u < 0x3f800000u + (1u << 16); u += 7) {
        float x = fl(u), r = fl(emu_cvt_rna_tf32(x));
        checks++;
        if ((bits(r) & 0x1fffu) || std::fabs((double)r - x) > std::ldexp(1.0, -11) * 1.0000001) {
            failures++;
            printf("FAIL range 0x%08x -> 0x%08x\n", u, bits(r));
            break;
        }
    }
}

// A (16 x 8) and B (8 x 8) of distinct tf32-exact values; every operand register also carries junk in its low 13 bits
static float Am[16][8], Bm[8][8], Cm[16][8];
static float got[16][8];

static void mmaChecks() {
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) Am[r][c] = (float)(r * 8 + c + 1) / 64.f * ((r + c) % 3 == 0 ? -1.f : 1.f);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) Bm[r][c] = (float)(r * 8 + c + 3) / 32.f * ((r * c) % 5 == 1 ? -1.f : 1.f);
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) Cm[r][c] = (float)(r - c) / 4.f;
    emu_run(1, 1, 1, 32, [] {
        int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
        uint32_t junk = 0x1234u + lane;  // < 2^13: in the bits the tensor core ignores
        // PTX ISA, mma.m16n8k8 .tf32: A row = g (a0, a2) or g + 8 (a1, a3), col = t (a0, a1) or t + 4 (a2, a3)
        uint32_t a[4] = {bits(Am[g][t]) | junk, bits(Am[g + 8][t]) | junk, bits(Am[g][t + 4]) | junk,
                         bits(Am[g + 8][t + 4]) | junk};
        // B row (k) = t (b0) or t + 4 (b1), col (n) = g
        uint32_t b0 = bits(Bm[t][g]) | junk, b1 = bits(Bm[t + 4][g]) | junk;
        // C / D: c0, c1 row g, cols 2t, 2t + 1; c2, c3 row g + 8
        float d[4] = {Cm[g][2 * t], Cm[g][2 * t + 1], Cm[g + 8][2 * t], Cm[g + 8][2 * t + 1]};
        emu_mma_m16n8k8_tf32(d, a, b0, b1);
        got[g][2 * t] = d[0];
        got[g][2 * t + 1] = d[1];
        got[g + 8][2 * t] = d[2];
        got[g + 8][2 * t + 1] = d[3];
    });
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double s = Cm[r][c];
            for (int k = 0; k < 8; k++) s += (double)Am[r][k] * Bm[k][c];
            checks++;
            if ((float)s != got[r][c]) {  // every product and partial sum here is exact in fp32
                failures++;
                if (failures < 10) printf("FAIL mma D[%d][%d]: got %.9g want %.9g\n", r, c, got[r][c], s);
            }
        }
}

int main() {
    cvtChecks();
    mmaChecks();
    if (failures) {
        printf("%d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("ok %d\n", checks);
    return 0;
}
