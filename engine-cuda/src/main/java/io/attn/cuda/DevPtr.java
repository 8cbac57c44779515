package io.attn.cuda;

import jcuda.driver.CUdeviceptr;

/**
 * A JCuda device pointer that also gives its raw address, for kernel arguments and for cuBLAS bound through {@code
 * java.lang.foreign}. {@code cuMemAlloc} fills it like any {@link CUdeviceptr}.
 */
final class DevPtr extends CUdeviceptr {
    DevPtr() {}

    private DevPtr(DevPtr base, long offset) {
        super(base, offset);
    }

    /** A pointer with a made-up address and no memory behind it, for tests that only inspect launch arguments. */
    static DevPtr fake(long address) {
        return new DevPtr(new DevPtr(), address);
    }

    /** The device address (0 before allocation). */
    long address() {
        return getNativePointer() + getByteOffset();
    }

    @Override
    public String toString() {
        return "DevPtr[0x" + Long.toHexString(address()) + "]";
    }
}
