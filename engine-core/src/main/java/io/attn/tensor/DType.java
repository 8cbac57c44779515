package io.attn.tensor;

/**
 * Element types. The compute path is float32 today; F16 and BF16 exist so that files holding them can be read (they
 * are widened to F32 on load) and so that a backend can later declare half-precision buffers without changing the
 * graph.
 */
public enum DType {
    F32(4),
    F16(2),
    BF16(2),
    F64(8),
    /** Signed 8-bit integers: quantized weights (int8 storage, {@link Tensor#ofInt8}); never a computed value. */
    I8(1);

    private final int byteSize;

    DType(int byteSize) {
        this.byteSize = byteSize;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }
}
