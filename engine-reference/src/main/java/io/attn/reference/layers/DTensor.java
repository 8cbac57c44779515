package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Arrays;

/**
 * A double-precision, row-major tensor: the reference's own value type, kept apart from the engine's float32
 * {@link Tensor} so that no engine code runs inside the reference.
 *
 * <p>The arrays are not copied (record components are exposed as is); treat instances as immutable. Being a record
 * over arrays, {@code equals} compares array identity, not contents.
 */
public record DTensor(int[] shape, double[] data) {

    public DTensor {
        long n = 1;
        for (int d : shape) {
            if (d < 0) throw new IllegalArgumentException("negative dimension in " + Arrays.toString(shape));
            n *= d;
        }
        if (n != data.length)
            throw new IllegalArgumentException("DTensor data has " + data.length + " elements but shape "
                    + Arrays.toString(shape) + " needs " + n);
    }

    /** A zero tensor of the given shape. */
    public static DTensor zeros(int... shape) {
        long n = 1;
        for (int d : shape) n *= d;
        return new DTensor(shape.clone(), new double[Math.toIntExact(n)]);
    }

    /** The float32 tensor widened to double (exactly). */
    public static DTensor of(Tensor t) {
        float[] f = t.data();
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return new DTensor(t.shape().dims(), d);
    }

    /** Rounds to a float32 engine tensor (e.g. to feed a reference result to the engine as input). */
    public Tensor toTensor() {
        float[] f = new float[data.length];
        for (int i = 0; i < f.length; i++) f[i] = (float) data[i];
        return Tensor.of(f, shape.clone());
    }

    public int rank() {
        return shape.length;
    }

    /** Dimension {@code i}; negative counts from the end. */
    public int dim(int i) {
        return shape[i < 0 ? shape.length + i : i];
    }

    public int size() {
        return data.length;
    }

    /** Element at a multi-index (slow; for tests). */
    public double get(int... idx) {
        if (idx.length != shape.length)
            throw new IllegalArgumentException("index rank " + idx.length + " != tensor rank " + shape.length);
        int off = 0;
        for (int i = 0; i < idx.length; i++) {
            if (idx[i] < 0 || idx[i] >= shape[i])
                throw new IndexOutOfBoundsException(Arrays.toString(idx) + " out of " + Arrays.toString(shape));
            off = off * shape[i] + idx[i];
        }
        return data[off];
    }

    /** Same data viewed with another shape of equal size. */
    public DTensor reshape(int... newShape) {
        return new DTensor(newShape.clone(), data);
    }

    /** Largest {@code |this - other|} over all elements; shapes must match. NaN if either side has a NaN. */
    public double maxAbsDiff(Tensor other) {
        requireSameShape(other.shape().dims());
        float[] o = other.data();
        double m = 0;
        for (int i = 0; i < data.length; i++) {
            double d = Math.abs(data[i] - o[i]);
            if (Double.isNaN(d)) return Double.NaN;
            m = Math.max(m, d);
        }
        return m;
    }

    /** Largest {@code |this - other|} over all elements; shapes must match. NaN if either side has a NaN. */
    public double maxAbsDiff(DTensor other) {
        requireSameShape(other.shape);
        double m = 0;
        for (int i = 0; i < data.length; i++) {
            double d = Math.abs(data[i] - other.data[i]);
            if (Double.isNaN(d)) return Double.NaN;
            m = Math.max(m, d);
        }
        return m;
    }

    /** Largest absolute element (0 for an empty tensor). */
    public double maxAbs() {
        double m = 0;
        for (double v : data) m = Math.max(m, Math.abs(v));
        return m;
    }

    private void requireSameShape(int[] other) {
        if (!Arrays.equals(shape, other))
            throw new IllegalArgumentException(
                    "shape " + Arrays.toString(other) + " differs from " + Arrays.toString(shape));
    }

    @Override
    public String toString() {
        return "DTensor" + Arrays.toString(shape).replace('[', '(').replace(']', ')');
    }
}
