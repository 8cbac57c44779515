package io.attn.cpu;

import io.attn.backend.Buffer;
import io.attn.tensor.DType;

/** A CPU buffer: a float32 Java array. {@link CpuBackend#hostView} wraps a caller's array without copying. */
public record CpuBuffer(float[] data) implements Buffer {
    @Override
    public DType dtype() {
        return DType.F32;
    }

    @Override
    public long capacity() {
        return data.length;
    }

    /** The array behind {@code b}, which must be a CPU buffer. */
    public static float[] of(Buffer b) {
        if (b instanceof CpuBuffer c) return c.data;
        throw new IllegalArgumentException("not a CPU buffer: " + b);
    }
}
