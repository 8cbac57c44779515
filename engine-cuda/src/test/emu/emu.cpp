// The runtime side of cuda_emu.h.
//
// A grid's blocks are shared out to up to EMU_THREADS OS threads (default 2; blocks are independent on a GPU too, so
// this changes no result: the kernels have no atomics but embedding.cu's first-error flag); each OS thread runs its
// blocks one after another. A block's CUDA threads are fibers, all run by that OS thread: each fiber runs the kernel until
// it waits at a barrier (__syncthreads, or a warp's collective: shuffle, mma, ldmatrix) and yields; the scheduler
// resumes every unfinished fiber in turn until all have returned. Only the barriers switch, so a block's threads see
// each other's writes exactly at the synchronisation points a GPU guarantees, at the cost of a context switch instead
// of an OS thread per CUDA thread (issue: CI time). A block whose fibers all wait and none can go on (a barrier that
// not every thread reaches) aborts with one line instead of hanging.
//
// The switch: on x86-64 a few instructions of our own (emu_switch below: the callee-saved registers, the stack
// pointer, MXCSR and the x87 control word), not swapcontext, which also saves and restores the signal mask with a
// system call at every switch (and getcontext at every fiber's start): measured on a Firecracker guest where a
// system call takes about 1 us, a swapcontext round trip 2.1 us, and the emulated suites ran 1.4-6x slower than on
// the Zen 3 VM. Elsewhere ucontext as before.
#include "cuda_emu.h"
#include "cuda_bf16.h"

#include <sys/mman.h>

// the switch of our own (below) on x86-64; -DEMU_UCONTEXT builds the ucontext one there too
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_OWN_SWITCH 1
#else
#define EMU_OWN_SWITCH 0
#endif
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace {
// a barrier for fibers: the last to arrive opens it (a new generation); the others yield until it opens
struct Barrier {
    int expected = 0, count = 0;
    unsigned gen = 0;
};
struct Warp {
    Barrier bar;
    float vals[32];
    uint32_t frag[32][6];  // mma operands: a0..a3, b0, b1 per lane
};
struct Fiber {
#if EMU_OWN_SWITCH
    void *sp = nullptr;  // saved stack pointer (emu_switch's frame on top)
#else
    ucontext_t ctx;
#endif
    unsigned char *stack = nullptr;
    bool done = false;
};
constexpr size_t kStack = 256 * 1024;  // per CUDA thread, with a guard page below (mapped lazily)
constexpr size_t kGuard = 4096;
#if EMU_OWN_SWITCH
thread_local void *g_sched_sp;
#else
thread_local ucontext_t g_sched;
#endif
thread_local std::vector<Fiber> g_fibers;  // kept between launches: the stacks are reused
thread_local int g_cur;
const std::function<void()> *g_body;  // the launch's, shared by its OS threads
thread_local unsigned long long g_progress;  // arrivals and returns: a scheduler round without any means a deadlock
thread_local Barrier g_block;
thread_local std::vector<Warp> *g_warps;
thread_local unsigned char *g_smem;  // the running block's dynamic shared memory (emu_dynamic_smem) and its size
thread_local size_t g_smem_bytes;

#if EMU_OWN_SWITCH
}  // namespace
// saves the callee-saved registers, MXCSR and the x87 control word on the current stack, stores the stack pointer in
// *from, loads `to` as the stack pointer and restores the same from it (the System V ABI leaves every other register
// to the caller, which a call to this function already assumes clobbered)
extern "C" void emu_switch(void **from, void *to);
asm(R"(
    .text
    .globl emu_switch
    .hidden emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
)");
namespace {
void to_scheduler(Fiber &f) { emu_switch(&f.sp, g_sched_sp); }
void to_fiber(Fiber &f) { emu_switch(&g_sched_sp, f.sp); }
#else
void to_scheduler(Fiber &f) { swapcontext(&f.ctx, &g_sched); }
void to_fiber(Fiber &f) { swapcontext(&g_sched, &f.ctx); }
#endif

void arrive_and_wait(Barrier &b) {
    unsigned gen = b.gen;
    g_progress++;
    if (++b.count == b.expected) {
        b.count = 0;
        b.gen++;
        return;
    }
    while (b.gen == gen) to_scheduler(g_fibers[g_cur]);
}

void fiber_main() {
    (*g_body)();
    g_fibers[g_cur].done = true;
    g_progress++;
}  // ucontext: returns to g_sched through uc_link

#if EMU_OWN_SWITCH
// a fiber's first instruction: entered by emu_switch's ret on a fresh stack; never returns (a finished fiber is not
// resumed: the scheduler skips it and the next block starts it afresh)
void fiber_entry() {
    fiber_main();
    to_scheduler(g_fibers[g_cur]);
    __builtin_trap();
}

// a fiber's fresh start. Here: its stack as emu_switch leaves one: from the top a zero return address (fiber_entry is entered as
// if called: the stack pointer 8 past a 16-byte boundary), fiber_entry for the ret, six zero registers, then MXCSR
// and the x87 control word as this thread has them
void start(Fiber &f) {
    uint64_t *top = (uint64_t *)(f.stack + kGuard + kStack);  // 16-byte aligned (mmap'ed, sizes multiples of 4096)
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    uint64_t *sp = top - 9;
    sp[8] = 0;
    sp[7] = (uint64_t)(void *)&fiber_entry;
    for (int i = 1; i < 7; i++) sp[i] = 0;
    sp[0] = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
    f.sp = sp;
}
#else
void start(Fiber &f) {
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack + kGuard;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = &g_sched;
    makecontext(&f.ctx, fiber_main, 0);
}
#endif

void ensure_fibers(int n) {
    while ((int)g_fibers.size() < n) {
        Fiber f;
        void *m = mmap(nullptr, kStack + kGuard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "emu: no memory for a fiber stack\n");
            abort();
        }
        mprotect(m, kGuard, PROT_NONE);
        f.stack = (unsigned char *)m;
        g_fibers.push_back(f);
    }
}
}  // namespace

void __syncthreads() { arrive_and_wait(g_block); }

float __shfl_xor_sync(unsigned, float v, int laneMask) {
    int lane = threadIdx.x & 31;
    Warp &w = (*g_warps)[threadIdx.x >> 5];
    w.vals[lane] = v;
    arrive_and_wait(w.bar);
    float r = w.vals[lane ^ laneMask];
    arrive_and_wait(w.bar);
    return r;
}

namespace {
float from16(uint32_t bits, bool f16) {
    bits &= 0xffffu;
    if (f16) {
        _Float16 h;
        uint16_t s = (uint16_t)bits;
        memcpy(&h, &s, 2);
        return (float)h;
    }
    uint32_t u = bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
}  // namespace

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.f32, fragment layouts from the PTX ISA (groupID g = lane >> 2,
// threadID_in_group t = lane & 3; the lower column / k index sits in the low 16 bits of a register):
//   A (16 x 16): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16 x 8):  b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8..2t+9, n = g)
//   C, D (16 x 8, f32): d0, d1 (g, 2t..2t+1), d2, d3 (g+8, 2t..2t+1)
// Every lane deposits its operands, then computes its own four outputs in double and rounds once (a tensor core
// accumulates in at least fp32; the difference is far below the tests' bounds).
void emu_mma_m16n8k16(float *d, const uint32_t *a, uint32_t b0, uint32_t b1, bool f16) {
    int lane = threadIdx.x & 31;
    Warp &w = (*g_warps)[threadIdx.x >> 5];
    for (int i = 0; i < 4; i++) w.frag[lane][i] = a[i];
    w.frag[lane][4] = b0;
    w.frag[lane][5] = b1;
    arrive_and_wait(w.bar);
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int h = 0; h < 2; h++) {
            A[g][2 * t + h] = from16(w.frag[l][0] >> (16 * h), f16);
            A[g + 8][2 * t + h] = from16(w.frag[l][1] >> (16 * h), f16);
            A[g][2 * t + 8 + h] = from16(w.frag[l][2] >> (16 * h), f16);
            A[g + 8][2 * t + 8 + h] = from16(w.frag[l][3] >> (16 * h), f16);
            B[2 * t + h][g] = from16(w.frag[l][4] >> (16 * h), f16);
            B[2 * t + 8 + h][g] = from16(w.frag[l][5] >> (16 * h), f16);
        }
    }
    arrive_and_wait(w.bar);
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++) {
        int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
        double s = d[i];
        for (int k = 0; k < 16; k++) s += (double)A[row][k] * B[k][col];
        d[i] = (float)s;
    }
}

int atomicCAS(int *address, int compare, int val) {  // blocks run on several OS threads: a real CAS
    __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the old value (written back into compare when the exchange failed)
}

void emu_run(int gx, int gy, int gz, int bx, const std::function<void()> &body) { emu_run(gx, gy, gz, bx, 0, body); }

namespace {
// runs blocks next.fetch_add(1) .. of the grid (x fastest) on this OS thread until none is left
void run_blocks(int gx, int gy, int gz, int bx, int smem, std::atomic<long long> &next) {
    int nw = (bx + 31) / 32;
    size_t smemAlloc = ((size_t)std::max(smem, 0) + 127) / 128 * 128 + 128;
    std::unique_ptr<unsigned char, void (*)(void *)> dyn((unsigned char *)aligned_alloc(128, smemAlloc), free);
    g_smem = dyn.get();
    g_smem_bytes = (size_t)std::max(smem, 0);
    ensure_fibers(bx);
    long long total = (long long)gx * gy * gz;
    for (long long i; (i = next.fetch_add(1)) < total;) {
        int x = (int)(i % gx), y = (int)(i / gx % gy), z = (int)(i / ((long long)gx * gy));
        memset(g_smem, 0xff, smemAlloc);  // garbage: a kernel reading shared memory it never wrote fails
        std::vector<Warp> warps(nw);
        for (int w = 0; w < nw; w++) warps[w].bar.expected = std::min(32, bx - 32 * w);
        g_block = Barrier{bx, 0, 0};
        g_warps = &warps;
        blockIdx = {(unsigned)x, (unsigned)y, (unsigned)z};
        for (int t = 0; t < bx; t++) {
            Fiber &f = g_fibers[t];
            f.done = false;
            start(f);
        }
        for (int live = bx; live > 0;) {
            unsigned long long before = g_progress;
            for (int t = 0; t < bx; t++) {
                Fiber &f = g_fibers[t];
                if (f.done) continue;
                g_cur = t;
                threadIdx = {(unsigned)t, 0, 0};
                to_fiber(f);
                if (f.done) live--;
            }
            if (live > 0 && g_progress == before) {
                fprintf(stderr, "emu: block (%d, %d, %d) deadlocked: %d of %d threads wait at a barrier that "
                        "the others never reach\n", x, y, z, live, bx);
                abort();
            }
        }
    }
    g_smem = nullptr;
}

// EMU_THREADS (default 2, 1 to 64), read at each launch
int emu_threads() {
    const char *e = getenv("EMU_THREADS");
    int v = e ? atoi(e) : 2;
    return v < 1 ? 1 : v > 64 ? 64 : v;
}

// OS threads kept for the process's life (their fibers' stacks are reused across launches); a launch hands each the
// same job and waits until all have returned
struct Workers {
    std::mutex m;
    std::condition_variable wake, idle;
    std::function<void()> job;
    unsigned long long gen = 0;
    int want = 0, busy = 0, started = 0;

    void run(int helpers, const std::function<void()> &f) {
        std::unique_lock<std::mutex> lk(m);
        while (started < helpers) {
            std::thread([this, id = started] { loop(id); }).detach();
            started++;
        }
        job = f;
        want = helpers;
        busy = helpers;
        gen++;
        wake.notify_all();
        lk.unlock();
        f();  // the launching thread's share
        lk.lock();
        idle.wait(lk, [this] { return busy == 0; });
        job = nullptr;
    }

    void loop(int id) {
        unsigned long long seen = 0;
        std::unique_lock<std::mutex> lk(m);
        for (;;) {
            wake.wait(lk, [&] { return gen != seen; });
            seen = gen;
            if (id >= want) continue;  // this launch needs fewer threads
            std::function<void()> f = job;
            lk.unlock();
            f();
            lk.lock();
            if (--busy == 0) idle.notify_all();
        }
    }
};
Workers &g_workers = *new Workers;  // never destroyed: its threads wait on it until the process ends
std::mutex g_launch;  // one launch at a time (the JVM side serialises them too)
}  // namespace

void emu_run(int gx, int gy, int gz, int bx, int smem, const std::function<void()> &body) {
    std::lock_guard<std::mutex> one(g_launch);
    gridDim = {(unsigned)gx, (unsigned)gy, (unsigned)gz};
    blockDim = {(unsigned)bx, 1, 1};
    g_body = &body;
    std::atomic<long long> next{0};
    long long total = (long long)gx * gy * gz;
    int helpers = (int)std::min<long long>(emu_threads(), total) - 1;
    auto share = [&] { run_blocks(gx, gy, gz, bx, smem, next); };
    if (helpers <= 0)
        share();
    else
        g_workers.run(helpers, share);
}

// ---- flash_attention_fa2.cu: dynamic shared memory, cp.async, ldmatrix ----

unsigned char *emu_dynamic_smem() { return g_smem; }

uint32_t emu_smem_addr(const void *p) {
    const unsigned char *c = (const unsigned char *)p;
    if (c < g_smem || c > g_smem + g_smem_bytes) {
        fprintf(stderr, "emu_smem_addr: %p is not in the block's dynamic shared memory\n", p);
        abort();
    }
    return (uint32_t)(c - g_smem);
}

namespace {
// the shared bytes [addr, addr + n), checked against the launch's dynamic shared memory size
unsigned char *smem_at(uint32_t addr, size_t n, const char *what) {
    if ((size_t)addr + n > g_smem_bytes) {
        fprintf(stderr, "%s: shared address %u + %zu past the %zu bytes of dynamic shared memory\n", what, addr, n,
                g_smem_bytes);
        abort();
    }
    return g_smem + addr;
}
}  // namespace

void emu_cp_async16(uint32_t dst, const void *src, int srcBytes) {
    if (dst % 16 != 0 || (srcBytes != 0 && (uintptr_t)src % 16 != 0) || srcBytes < 0 || srcBytes > 16) {
        fprintf(stderr, "cp.async: misaligned or bad size (dst %u, src %p, %d bytes)\n", dst, src, srcBytes);
        abort();
    }
    unsigned char *d = smem_at(dst, 16, "cp.async");
    if (srcBytes > 0) memcpy(d, src, srcBytes);
    memset(d + srcBytes, 0, 16 - srcBytes);
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}{,.trans}.shared.b16, after the PTX ISA's "Warp-level matrix load instruction:
// ldmatrix" (section 9.7.14.5.15 in ISA 8.x; figure "ldmatrix fragment layout"): lanes 8i .. 8i+7 give the addresses
// of rows 0..7 of matrix i (each row eight contiguous 16-bit elements, 16-byte aligned); every lane receives one
// 32-bit register per matrix, holding row lane/4, columns 2 (lane%4) and 2 (lane%4) + 1 (the lower column in the low
// half). With .trans each matrix is transposed as it is loaded: the register holds element (row 2 (lane%4), column
// lane/4) in the low half and (row 2 (lane%4) + 1, column lane/4) in the high half of the matrix as stored.
void emu_ldmatrix(uint32_t *r, int num, bool trans, uint32_t addr) {
    int lane = threadIdx.x & 31;
    Warp &w = (*g_warps)[threadIdx.x >> 5];
    if (num != 1 && num != 2 && num != 4) abort();
    w.frag[lane][0] = addr;  // the mma operand slots double as the address exchange
    arrive_and_wait(w.bar);
    for (int i = 0; i < num; i++) {
        uint32_t v = 0;
        for (int h = 0; h < 2; h++) {
            int row = trans ? 2 * (lane % 4) + h : lane / 4, col = trans ? lane / 4 : 2 * (lane % 4) + h;
            uint32_t rowAddr = w.frag[8 * i + row][0];
            if (rowAddr % 16 != 0) {
                fprintf(stderr, "ldmatrix: row address %u (lane %d) not 16-byte aligned\n", rowAddr, 8 * i + row);
                abort();
            }
            uint16_t e;
            memcpy(&e, smem_at(rowAddr + 2 * col, 2, "ldmatrix"), 2);
            v |= (uint32_t)e << (16 * h);
        }
        r[i] = v;
    }
    arrive_and_wait(w.bar);
}

// cvt.rna.tf32.f32: keep sign, exponent and the top 10 mantissa bits, rounding the dropped 13 bits to nearest with
// ties away from zero (add half an ulp of tf32 to the magnitude, then truncate; a carry into the exponent is the
// correct rounding, up to inf). NaN stays NaN, inf stays inf.
uint32_t emu_cvt_rna_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (u & 0x007fffffu) ? (u | 0x00400000u) & 0xffffe000u : u;  // quiet NaN
    u += 0x1000u;
    return u & 0xffffe000u;
}

namespace {
float tf32_value(uint32_t bits) {  // the tensor core reads sign, exponent and 10 mantissa bits
    bits &= 0xffffe000u;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
}  // namespace

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, fragment layouts from the PTX ISA (g = lane >> 2,
// t = lane & 3; one tf32 element per 32-bit register):
//   A (16 x 8, row): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
//   B (8 x 8, col):  b0 (k = t, n = g), b1 (k = t+4, n = g)
//   C, D (16 x 8, f32): d0, d1 (g, 2t..2t+1), d2, d3 (g+8, 2t..2t+1)
// Products of two tf32 values are exact in double; each output is summed in double and rounded once.
void emu_mma_m16n8k8_tf32(float *d, const uint32_t *a, uint32_t b0, uint32_t b1) {
    int lane = threadIdx.x & 31;
    Warp &w = (*g_warps)[threadIdx.x >> 5];
    for (int i = 0; i < 4; i++) w.frag[lane][i] = a[i];
    w.frag[lane][4] = b0;
    w.frag[lane][5] = b1;
    arrive_and_wait(w.bar);
    float A[16][8], B[8][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        A[g][t] = tf32_value(w.frag[l][0]);
        A[g + 8][t] = tf32_value(w.frag[l][1]);
        A[g][t + 4] = tf32_value(w.frag[l][2]);
        A[g + 8][t + 4] = tf32_value(w.frag[l][3]);
        B[t][g] = tf32_value(w.frag[l][4]);
        B[t + 4][g] = tf32_value(w.frag[l][5]);
    }
    arrive_and_wait(w.bar);
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++) {
        int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
        double s = d[i];
        for (int k = 0; k < 8; k++) s += (double)A[row][k] * B[k][col];
        d[i] = (float)s;
    }
}
