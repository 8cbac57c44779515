package io.attn.tensor;

import io.attn.AttnException;
import java.util.Arrays;

/**
 * An immutable row-major shape. Dimensions are non-negative ints; the element count must fit in an int (host tensors
 * are Java arrays).
 */
public final class Shape {
    private final int[] dims;
    private final int size;

    private Shape(int[] dims) {
        this.dims = dims;
        long n = 1;
        for (int d : dims) {
            if (d < 0) throw AttnException.shape("negative dimension in shape " + Arrays.toString(dims));
            n *= d;
            if (n > Integer.MAX_VALUE - 16)
                throw AttnException.shape("shape " + Arrays.toString(dims) + " has too many elements for one tensor");
        }
        this.size = (int) n;
    }

    public static Shape of(int... dims) {
        return new Shape(dims.clone());
    }

    public int rank() {
        return dims.length;
    }

    /** Dimension {@code i}; negative indices count from the end like PyTorch ({@code dim(-1)} is the last). */
    public int dim(int i) {
        return dims[i < 0 ? dims.length + i : i];
    }

    public int[] dims() {
        return dims.clone();
    }

    /** Number of elements. */
    public int size() {
        return size;
    }

    /** Product of all dimensions but the last {@code k}. */
    public int leading(int k) {
        int n = 1;
        for (int i = 0; i < dims.length - k; i++) n *= dims[i];
        return n;
    }

    /** This shape with the last dimension replaced. */
    public Shape withLast(int last) {
        int[] d = dims.clone();
        d[d.length - 1] = last;
        return new Shape(d);
    }

    /** This shape with dimension {@code i} replaced. */
    public Shape with(int i, int value) {
        int[] d = dims.clone();
        d[i < 0 ? d.length + i : i] = value;
        return new Shape(d);
    }

    /** A new shape with {@code dim} inserted before index {@code at}. */
    public Shape insert(int at, int dim) {
        int[] d = new int[dims.length + 1];
        System.arraycopy(dims, 0, d, 0, at);
        d[at] = dim;
        System.arraycopy(dims, at, d, at + 1, dims.length - at);
        return new Shape(d);
    }

    /** A new shape without dimension {@code at}. */
    public Shape remove(int at) {
        int[] d = new int[dims.length - 1];
        System.arraycopy(dims, 0, d, 0, at);
        System.arraycopy(dims, at + 1, d, at, dims.length - at - 1);
        return new Shape(d);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Shape s && Arrays.equals(dims, s.dims);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(dims);
    }

    @Override
    public String toString() {
        return Arrays.toString(dims).replace('[', '(').replace(']', ')');
    }
}
