package io.attn.tensor;

import io.attn.AttnException;
import java.util.Arrays;
import java.util.Objects;

/**
 * A host tensor: a shape and row-major float32 data in a Java array.
 *
 * <p>Host storage is a {@code float[]} (see docs/design.md): the Vector API reads and writes arrays at full speed,
 * the GC owns the memory (no leak when a service drops a tensor), and every tensor the engine handles on the host
 * fits in 2^31 elements. Reduced-precision dtypes are widened to F32 when files are read; a future F16/BF16 host
 * tensor would add a {@code short[]} storage next to this one, which is why the dtype is carried explicitly.
 *
 * <p>Tensors are not copied defensively: {@link #data()} exposes the array. A tensor handed to the engine must not be
 * mutated while a call that reads it is running. Instances are otherwise immutable and safe to share.
 */
public final class Tensor {
    private final Shape shape;
    private final float[] data;
    private final byte[] int8; // non-null for an I8 tensor (then data is null)

    private Tensor(Shape shape, float[] data) {
        this.shape = Objects.requireNonNull(shape);
        this.data = Objects.requireNonNull(data);
        this.int8 = null;
        if (data.length != shape.size())
            throw AttnException.shape(
                    "tensor data has " + data.length + " elements but shape " + shape + " needs " + shape.size());
    }

    private Tensor(Shape shape, byte[] int8) {
        this.shape = Objects.requireNonNull(shape);
        this.data = null;
        this.int8 = Objects.requireNonNull(int8);
        if (int8.length != shape.size())
            throw AttnException.shape(
                    "int8 tensor data has " + int8.length + " elements but shape " + shape + " needs " + shape.size());
    }

    /**
     * Wraps {@code data} (not copied) as an {@link DType#I8} tensor: quantized weights, kept one byte per element. Such
     * a tensor has no float data ({@link #data()} fails); {@link #int8()} is its array.
     */
    public static Tensor ofInt8(byte[] data, int... dims) {
        return new Tensor(Shape.of(dims), data);
    }

    /** Wraps {@code data} (not copied) as a tensor of the given shape. */
    public static Tensor of(Shape shape, float[] data) {
        return new Tensor(shape, data);
    }

    /** Wraps {@code data} (not copied) as a tensor of the given dimensions. */
    public static Tensor of(float[] data, int... dims) {
        return new Tensor(Shape.of(dims), data);
    }

    public static Tensor zeros(int... dims) {
        Shape s = Shape.of(dims);
        return new Tensor(s, new float[s.size()]);
    }

    public static Tensor zeros(Shape s) {
        return new Tensor(s, new float[s.size()]);
    }

    public DType dtype() {
        return int8 != null ? DType.I8 : DType.F32;
    }

    /** The backing array of an {@link DType#I8} tensor (not a copy). */
    public byte[] int8() {
        if (int8 == null) throw new IllegalStateException("a " + dtype() + " tensor has no int8 data");
        return int8;
    }

    public Shape shape() {
        return shape;
    }

    public int rank() {
        return shape.rank();
    }

    public int dim(int i) {
        return shape.dim(i);
    }

    public int size() {
        return shape.size();
    }

    /** The backing array (not a copy). */
    public float[] data() {
        if (data == null) throw new IllegalStateException("an I8 tensor" + shape + " has no float data");
        return data;
    }

    /** Same data, another shape with the same element count. */
    public Tensor reshape(int... dims) {
        return reshape(Shape.of(dims));
    }

    public Tensor reshape(Shape s) {
        return int8 != null ? new Tensor(s, int8) : new Tensor(s, data);
    }

    /** Element at a multi-index (slow; for tests and printing). */
    public float get(int... idx) {
        return data[offset(idx)];
    }

    public void set(float v, int... idx) {
        data[offset(idx)] = v;
    }

    private int offset(int[] idx) {
        if (idx.length != shape.rank())
            throw new IllegalArgumentException("index rank " + idx.length + " != tensor rank " + shape.rank());
        int off = 0;
        for (int i = 0; i < idx.length; i++) {
            int d = shape.dim(i);
            if (idx[i] < 0 || idx[i] >= d)
                throw new IndexOutOfBoundsException("index " + Arrays.toString(idx) + " out of " + shape);
            off = off * d + idx[i];
        }
        return off;
    }

    /** A deep copy. */
    public Tensor copy() {
        return int8 != null ? new Tensor(shape, int8.clone()) : new Tensor(shape, data.clone());
    }

    /** Rows {@code [from, to)} of the first dimension, copied. */
    public Tensor slice0(int from, int to) {
        int inner = shape.size() / Math.max(1, shape.dim(0));
        float[] d = Arrays.copyOfRange(data, from * inner, to * inner);
        return new Tensor(shape.with(0, to - from), d);
    }

    /** Whether every element is finite (a vectorised scan, see {@link Finite}). */
    public boolean allFinite() {
        if (int8 != null) return true;
        return Finite.indexOfNonFinite(data) < 0;
    }

    /** The multi-index of flat element {@code i}, as {@code [b, l, e]}, for messages. */
    public String indexString(int i) {
        int[] idx = new int[shape.rank()];
        for (int d = shape.rank() - 1; d >= 0; d--) {
            int n = Math.max(1, shape.dim(d));
            idx[d] = i % n;
            i /= n;
        }
        return Arrays.toString(idx);
    }

    @Override
    public String toString() {
        return "Tensor" + shape;
    }
}
