package io.attn.cuda;

import java.util.ArrayList;
import java.util.List;
import jcuda.NativePointerObject;
import jcuda.Pointer;

/**
 * The parameter list of one kernel launch, in the order of the kernel's C signature. Device pointers are passed as
 * their 64-bit address (0 for a null pointer), ints as 32-bit, long longs as 64-bit, floats as 32-bit: the sizes must
 * match the {@code .param} declarations in the PTX exactly. Public for the op classes ({@code io.attn.cuda.ops}), which
 * build the lists; only this package launches them.
 */
public final class KernelArgs {
    /** An empty list; {@link CudaStream#args} starts one with buffers. */
    public KernelArgs() {}

    private final List<NativePointerObject> args = new ArrayList<>();
    private final List<String> types = new ArrayList<>(); // PTX param types, checked against the PTX at launch
    private final List<Number> values = new ArrayList<>(); // the same values, for error messages and tests

    /** Applies {@code more} (a group of arguments several kernels share) and returns the result. */
    public KernelArgs then(java.util.function.UnaryOperator<KernelArgs> more) {
        return more.apply(this);
    }

    public KernelArgs ptr(CudaBuffer b) {
        return ptr(b == null ? 0L : b.ptr().address());
    }

    public KernelArgs ptr(long address) {
        args.add(Pointer.to(new long[] {address}));
        types.add("u64");
        values.add(address);
        return this;
    }

    public KernelArgs i32(int v) {
        args.add(Pointer.to(new int[] {v}));
        types.add("u32");
        values.add(v);
        return this;
    }

    public KernelArgs i64(long v) {
        args.add(Pointer.to(new long[] {v}));
        types.add("u64");
        values.add(v);
        return this;
    }

    public KernelArgs f32(float v) {
        args.add(Pointer.to(new float[] {v}));
        types.add("f32");
        values.add(v);
        return this;
    }

    /** The PTX types of the arguments so far ({@code u64}, {@code u32}, {@code f32}). */
    List<String> types() {
        return types;
    }

    /** The argument values (Long for pointers and 64-bit ints, Integer, Float), in order. */
    List<Number> values() {
        return values;
    }

    /** The {@code kernelParams} array for {@code cuLaunchKernel}. */
    Pointer build() {
        return Pointer.to(args.toArray(NativePointerObject[]::new));
    }
}
