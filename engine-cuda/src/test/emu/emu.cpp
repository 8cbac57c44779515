// The runtime side of cuda_emu.h.
#include "cuda_emu.h"

#include <barrier>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace {
struct Warp {
    std::unique_ptr<std::barrier<>> bar;
    float vals[32];
};
std::barrier<> *g_block;
std::vector<Warp> *g_warps;
std::mutex g_atomic;
}  // namespace

void __syncthreads() { g_block->arrive_and_wait(); }

float __shfl_xor_sync(unsigned, float v, int laneMask) {
    int lane = threadIdx.x & 31;
    Warp &w = (*g_warps)[threadIdx.x >> 5];
    w.vals[lane] = v;
    w.bar->arrive_and_wait();
    float r = w.vals[lane ^ laneMask];
    w.bar->arrive_and_wait();
    return r;
}

int atomicCAS(int *address, int compare, int val) {
    std::lock_guard<std::mutex> lock(g_atomic);
    int old = *address;
    if (old == compare) *address = val;
    return old;
}

void emu_run(int gx, int gy, int gz, int bx, const std::function<void()> &body) {
    gridDim = {(unsigned)gx, (unsigned)gy, (unsigned)gz};
    blockDim = {(unsigned)bx, 1, 1};
    int nw = (bx + 31) / 32;
    for (int z = 0; z < gz; z++)
        for (int y = 0; y < gy; y++)
            for (int x = 0; x < gx; x++) {
                std::barrier<> block(bx);
                std::vector<Warp> warps(nw);
                for (int w = 0; w < nw; w++) warps[w].bar = std::make_unique<std::barrier<>>(std::min(32, bx - 32 * w));
                g_block = &block;
                g_warps = &warps;
                std::vector<std::thread> ts;
                ts.reserve(bx);
                for (int t = 0; t < bx; t++)
                    ts.emplace_back([=, &body] {
                        threadIdx = {(unsigned)t, 0, 0};
                        blockIdx = {(unsigned)x, (unsigned)y, (unsigned)z};
                        body();
                    });
                for (auto &t : ts) t.join();
            }
}
