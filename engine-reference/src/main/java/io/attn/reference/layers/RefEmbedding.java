package io.attn.reference.layers;

import io.attn.tensor.Tensor;

/** Double-precision reference for {@code nn.Embedding} lookups and the sinusoidal positional encoding. */
public final class RefEmbedding {
    private RefEmbedding() {}

    /**
     * {@code nn.Embedding} forward: row {@code ids[i]} of {@code table} (V,E) for each id; the result has shape
     * {@code idsShape + [E]}. ({@code padding_idx} only affects training, not the lookup.)
     */
    public static DTensor embedding(Tensor table, int[] ids, int... idsShape) {
        if (table.rank() != 2) throw new IllegalArgumentException("embedding table must be (V, E), got " + table);
        long n = 1;
        for (int d : idsShape) n *= d;
        if (n != ids.length)
            throw new IllegalArgumentException("ids has " + ids.length + " entries but its shape needs " + n);
        int v = table.dim(0), e = table.dim(1);
        double[] out = new double[ids.length * e];
        for (int i = 0; i < ids.length; i++) {
            int id = ids[i];
            if (id < 0 || id >= v)
                throw new IllegalArgumentException("token id " + id + " out of range [0, " + v + ")");
            for (int c = 0; c < e; c++) out[i * e + c] = table.data()[id * e + c];
        }
        int[] shape = new int[idsShape.length + 1];
        System.arraycopy(idsShape, 0, shape, 0, idsShape.length);
        shape[idsShape.length] = e;
        return new DTensor(shape, out);
    }

    /** {@link #embedding(Tensor, int[], int...)} for a flat id list: result (N, E). */
    public static DTensor embedding(Tensor table, int[] ids) {
        return embedding(table, ids, ids.length);
    }

    /**
     * Sinusoidal positional encoding (Vaswani et al.) for positions {@code offset .. offset+len-1}: (len, E) with
     * {@code PE[p, 2i] = sin(pos w_i)}, {@code PE[p, 2i+1] = cos(pos w_i)}, {@code w_i = exp(-ln(10000) 2i / E)},
     * {@code pos = offset + p}. For odd E the last column is a sine.
     */
    public static DTensor sinusoidalPositionalEncoding(int len, int e, int offset) {
        if (len < 0 || e <= 0 || offset < 0) throw new IllegalArgumentException("bad PE size " + len + "x" + e);
        double[] out = new double[len * e];
        for (int p = 0; p < len; p++) {
            double pos = offset + p;
            for (int c = 0; c < e; c += 2) {
                double w = Math.exp(-Math.log(10000.0) * c / e);
                out[p * e + c] = Math.sin(pos * w);
                if (c + 1 < e) out[p * e + c + 1] = Math.cos(pos * w);
            }
        }
        return new DTensor(new int[] {len, e}, out);
    }
}
