// 16-bit -> fp32 widening, for results a library computed in 16 bits (cuDNN's fused attention writes bf16 / fp16 O;
// io.attn.cuda.CudnnAttention widens it into the fp32 output with these).
//
// bf16_to_f32 / f16_to_f32 (x, out, n): out[i] = x[i] for i < n, x the raw 16-bit words. Exact (every bf16 / fp16
// value is an fp32 value): bf16 is the top half of an fp32 word; fp16 is decoded by its fields (subnormals scaled by
// 2^-24, inf and NaN kept). Grid-stride loops, 256 threads per block, any grid; plain integer code, so it needs no
// cuda_fp16.h / cuda_bf16.h and compiles for compute_75 and the host emulator alike.

__device__ __forceinline__ float bits_to_float(unsigned int u) {
#ifdef ATTN_HOST_EMU  // the host emulator has no __uint_as_float
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
#else
    return __uint_as_float(u);
#endif
}

__device__ __forceinline__ float bf16_bits_to_float(unsigned short h) { return bits_to_float((unsigned int)h << 16); }

__device__ __forceinline__ float f16_bits_to_float(unsigned short h) {
    unsigned int sign = ((unsigned int)h & 0x8000u) << 16, e = ((unsigned int)h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {  // zero or subnormal: m * 2^-24
        float f = (float)m * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    unsigned int bits = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
    return bits_to_float(bits);
}

extern "C" __global__ void __launch_bounds__(256) bf16_to_f32(const unsigned short* __restrict__ x,
                                                              float* __restrict__ out, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = bf16_bits_to_float(x[i]);
}

extern "C" __global__ void __launch_bounds__(256) f16_to_f32(const unsigned short* __restrict__ x,
                                                             float* __restrict__ out, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = f16_bits_to_float(x[i]);
}
