package io.attn.cuda;

import java.util.ArrayList;
import java.util.List;
import jcuda.NativePointerObject;
import jcuda.Pointer;

/**
 * The parameter list of one kernel launch, in the order of the kernel's C signature. Device pointers are passed as
 * their 64-bit address (0 for a null pointer), ints as 32-bit, long longs as 64-bit, floats as 32-bit: the sizes must
 * match the {@code .param} declarations in the PTX exactly.
 */
final class KernelArgs {
    private final List<NativePointerObject> args = new ArrayList<>();

    KernelArgs ptr(CudaBuffer b) {
        return ptr(b == null ? 0L : b.ptr().address());
    }

    KernelArgs ptr(long address) {
        args.add(Pointer.to(new long[] {address}));
        return this;
    }

    KernelArgs i32(int v) {
        args.add(Pointer.to(new int[] {v}));
        return this;
    }

    KernelArgs i64(long v) {
        args.add(Pointer.to(new long[] {v}));
        return this;
    }

    KernelArgs f32(float v) {
        args.add(Pointer.to(new float[] {v}));
        return this;
    }

    /** The {@code kernelParams} array for {@code cuLaunchKernel}. */
    Pointer build() {
        return Pointer.to(args.toArray(NativePointerObject[]::new));
    }
}
