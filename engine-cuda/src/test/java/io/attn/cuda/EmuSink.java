package io.attn.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.kernels.Kernel;
import io.attn.kernels.Kernels;
import io.attn.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * {@link OpSink} on host memory with the kernels run by {@link KernelEmulator}: "device pointers" are host addresses
 * of segments from an automatic arena. Every launch is also checked against the PTX parameter list.
 */
@SuppressWarnings("restricted")
final class EmuSink implements OpSink {
    private final KernelEmulator emu;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment err;
    long allocatedBytes;

    EmuSink(KernelEmulator emu) {
        this.emu = emu;
        this.err = arena.allocate(JAVA_INT);
    }

    @Override
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs args) {
        assertEquals(Kernels.params(kernel), args.types(), kernel.entry() + " argument types");
        emu.launch(kernel, gx, gy, gz, threads, smemBytes, args.values());
        launched.add(kernel);
    }

    /** The kernels launched so far (tests check that the path they mean to judge ran). */
    final java.util.Set<Kernel> launched = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public CudaBuffer allocate(DType dtype, long elements) {
        long bytes = Math.max(1, elements) * dtype.byteSize();
        allocatedBytes += bytes;
        MemorySegment s = arena.allocate(bytes, 16);
        s.fill((byte) 0x7f); // garbage (NaN-like) so that kernels relying on zeroed memory fail
        return new CudaBuffer(DevPtr.fake(s.address()), dtype, elements, null);
    }

    private static MemorySegment at(DevPtr p, long bytes) {
        return MemorySegment.ofAddress(p.address()).reinterpret(bytes);
    }

    @Override
    public void upload(float[] src, int count, CudaBuffer dst) {
        MemorySegment.copy(src, 0, at(dst.ptr(), 4L * count), JAVA_FLOAT, 0, count);
    }

    @Override
    public void upload8(byte[] src, CudaBuffer dst) {
        MemorySegment.copy(src, 0, at(dst.ptr(), src.length), java.lang.foreign.ValueLayout.JAVA_BYTE, 0, src.length);
    }

    @Override
    public void upload16(short[] src, CudaBuffer dst) {
        MemorySegment.copy(
                src, 0, at(dst.ptr(), 2L * src.length), java.lang.foreign.ValueLayout.JAVA_SHORT, 0, src.length);
    }

    @Override
    public void download(CudaBuffer src, float[] dst, int count, String after) {
        MemorySegment.copy(at(src.ptr(), 4L * count), JAVA_FLOAT, 0, dst, 0, count);
    }

    @Override
    public void sync(String after) {}

    @Override
    public void zero(DevPtr p, long n) {
        at(p, 4 * n).fill((byte) 0);
    }

    @Override
    public long errorWord() {
        return err.address();
    }

    @Override
    public int takeError(String after) {
        int v = err.get(JAVA_INT, 0);
        err.set(JAVA_INT, 0, 0);
        return v;
    }
}
