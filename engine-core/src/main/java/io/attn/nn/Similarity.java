package io.attn.nn;

import io.attn.AttnException;
import io.attn.tensor.Tensor;

/** Cosine similarity of context-aware embeddings (rows of an encoder's output), accumulated in double. */
public final class Similarity {
    private Similarity() {}

    /** Cosine similarity of rows {@code a (N, E)} and {@code b (M, E)}: an {@code (N, M)} matrix. */
    public static Tensor cosine(Tensor a, Tensor b) {
        if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(1))
            throw AttnException.shape(
                    "cosine similarity needs (N, E) and (M, E), got " + a.shape() + " and " + b.shape());
        int n = a.dim(0), m = b.dim(0), e = a.dim(1);
        float[] out = new float[n * m];
        double[] nb = new double[m];
        for (int j = 0; j < m; j++) nb[j] = norm(b.data(), j * e, e);
        for (int i = 0; i < n; i++) {
            double na = norm(a.data(), i * e, e);
            for (int j = 0; j < m; j++) {
                double dot = 0;
                for (int t = 0; t < e; t++) dot += (double) a.data()[i * e + t] * b.data()[j * e + t];
                // like torch.nn.functional.cosine_similarity: norms clamped by eps = 1e-8
                out[i * m + j] = (float) (dot / (Math.max(na, 1e-8) * Math.max(nb[j], 1e-8)));
            }
        }
        return Tensor.of(out, n, m);
    }

    private static double norm(float[] x, int off, int len) {
        double s = 0;
        for (int i = 0; i < len; i++) s += (double) x[off + i] * x[off + i];
        return Math.sqrt(s);
    }
}
