// host stand-in for CUDA's cuda_bf16.h / cuda_fp16.h (only what flash_attention_bf16.cu uses): 16-bit values as
// their bit patterns, conversions round to nearest even (bf16 by bit arithmetic, fp16 through g++'s _Float16).
#pragma once
#include <stdint.h>
#include <string.h>

struct float2 {
    float x, y;
};
inline float2 make_float2(float a, float b) { return {a, b}; }

struct __nv_bfloat16 {
    unsigned short x;
};
struct __nv_bfloat162 {
    __nv_bfloat16 x, y;
};
struct __half {
    unsigned short x;
};
struct __half2 {
    __half x, y;
};

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return {(unsigned short)((u >> 16) | 0x40)};  // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return {(unsigned short)(u >> 16)};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)}; }
inline __half __float2half_rn(float f) {
    _Float16 h = (_Float16)f;
    unsigned short s;
    memcpy(&s, &h, 2);
    return {s};
}
inline __half2 __floats2half2_rn(float a, float b) { return {__float2half_rn(a), __float2half_rn(b)}; }

// the warp-collective mma.sync.m16n8k16.row.col.f32.{bf16,f16} with the PTX ISA fragment layouts (emu.cpp)
void emu_mma_m16n8k16(float *d, const uint32_t *a, uint32_t b0, uint32_t b1, bool f16);
