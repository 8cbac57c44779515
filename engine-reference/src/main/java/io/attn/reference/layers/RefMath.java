package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Arrays;

/**
 * Double-precision building blocks of the layer reference: erf/erfc, the exact GELU, ReLU, {@code nn.Linear},
 * {@code nn.LayerNorm} and a cosine similarity. Plain loops, no engine code.
 */
public final class RefMath {
    private RefMath() {}

    private static final double TWO_OVER_SQRT_PI = 2.0 / Math.sqrt(Math.PI);
    private static final double INV_SQRT_PI = 1.0 / Math.sqrt(Math.PI);
    private static final double INV_SQRT2 = 1.0 / Math.sqrt(2.0);
    /** Where erf switches from the power series to the continued fraction for erfc. */
    private static final double SERIES_LIMIT = 2.5;

    /**
     * The error function. For {@code |x| < 2.5} the everywhere-positive series {@code erf(x) = 2/sqrt(pi) e^{-x^2}
     * sum_n (2x^2)^n x / (1*3*...*(2n+1))} (no cancellation, at most ~40 terms here); beyond, {@code 1 - erfc(|x|)}
     * with erfc from its Laplace continued fraction. Checked against libm's erf: absolute error about 1e-15.
     */
    public static double erf(double x) {
        if (Double.isNaN(x)) return Double.NaN;
        double ax = Math.abs(x);
        if (ax < SERIES_LIMIT) return erfSeries(x);
        double r = 1.0 - erfcContinuedFraction(ax);
        return x < 0 ? -r : r;
    }

    /** The complementary error function {@code 1 - erf(x)}, with relative accuracy kept for large positive x. */
    public static double erfc(double x) {
        if (Double.isNaN(x)) return Double.NaN;
        if (x >= SERIES_LIMIT) return erfcContinuedFraction(x);
        if (x <= -SERIES_LIMIT) return 2.0 - erfcContinuedFraction(-x);
        return 1.0 - erfSeries(x);
    }

    private static double erfSeries(double x) {
        double x2 = x * x;
        double term = x;
        double sum = x;
        for (int n = 1; n < 200; n++) {
            term *= 2.0 * x2 / (2 * n + 1);
            sum += term;
            if (Math.abs(term) <= 1e-17 * Math.abs(sum)) break;
        }
        return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
    }

    /**
     * erfc(x) for x &gt; 0 as {@code e^{-x^2}/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))}, evaluated by the
     * modified Lentz method (about 40 steps at x = 2.5, fewer beyond).
     */
    private static double erfcContinuedFraction(double x) {
        final double tiny = 1e-300;
        double f = x;
        double c = f;
        double d = 0;
        for (int j = 1; j < 5000; j++) {
            double a = 0.5 * j;
            d = x + a * d;
            if (d == 0) d = tiny;
            c = x + a / c;
            if (c == 0) c = tiny;
            d = 1.0 / d;
            double delta = c * d;
            f *= delta;
            if (Math.abs(delta - 1.0) < 1e-16) break;
        }
        return Math.exp(-x * x) * INV_SQRT_PI / f;
    }

    /** Exact GELU, {@code 0.5 x (1 + erf(x / sqrt 2))} (PyTorch's {@code approximate='none'}). */
    public static double gelu(double x) {
        // 1 + erf(z) = erfc(-z): for negative x this keeps relative accuracy in the tail.
        return 0.5 * x * erfc(-x * INV_SQRT2);
    }

    public static double relu(double x) {
        return x > 0 ? x : 0.0;
    }

    /** Applies "relu" or "gelu" (exact) elementwise, returning a new tensor. */
    public static DTensor activation(DTensor x, String name) {
        double[] out = new double[x.size()];
        double[] in = x.data();
        switch (name) {
            case "relu" -> {
                for (int i = 0; i < out.length; i++) out[i] = relu(in[i]);
            }
            case "gelu" -> {
                for (int i = 0; i < out.length; i++) out[i] = gelu(in[i]);
            }
            default -> throw new IllegalArgumentException("unknown activation '" + name + "' (relu or gelu)");
        }
        return new DTensor(x.shape().clone(), out);
    }

    /** {@code nn.Linear}: {@code y = x W^T + b} over the last dimension; W is (out, in), b is (out) or null. */
    public static DTensor linear(DTensor x, Tensor weight, Tensor bias) {
        if (weight.rank() != 2) throw new IllegalArgumentException("linear weight must be 2-D, got " + weight);
        int out = weight.dim(0);
        int in = weight.dim(1);
        if (bias != null && (bias.rank() != 1 || bias.dim(0) != out))
            throw new IllegalArgumentException("linear bias " + bias + " does not fit weight " + weight);
        return linearRows(x, weight.data(), 0, out, in, bias == null ? null : bias.data());
    }

    /**
     * {@code y = x W[r0:r0+out]^T + b[r0:r0+out]}: a linear layer on a block of rows of a packed weight (e.g. one of
     * q/k/v in {@code in_proj_weight}, whose bias is packed the same way). {@code w} is row-major with {@code in}
     * columns; {@code b} may be null.
     */
    static DTensor linearRows(DTensor x, float[] w, int r0, int out, int in, float[] b) {
        if (x.dim(-1) != in)
            throw new IllegalArgumentException(
                    "linear input " + x + " has last dimension " + x.dim(-1) + ", weight expects " + in);
        int rows = x.size() / in;
        double[] xd = x.data();
        double[] y = new double[rows * out];
        for (int r = 0; r < rows; r++) {
            for (int o = 0; o < out; o++) {
                double s = b == null ? 0.0 : b[r0 + o];
                int wo = (r0 + o) * in;
                int xo = r * in;
                for (int i = 0; i < in; i++) s += xd[xo + i] * (double) w[wo + i];
                y[r * out + o] = s;
            }
        }
        int[] shape = x.shape().clone();
        shape[shape.length - 1] = out;
        return new DTensor(shape, y);
    }

    /**
     * {@code nn.LayerNorm} over the last dimension: {@code (x - mean) / sqrt(var + eps) * w + b} with the biased
     * (population) variance. {@code weight}/{@code bias} may be null (elementwise_affine=False / bias=False).
     */
    public static DTensor layerNorm(DTensor x, Tensor weight, Tensor bias, double eps) {
        int n = x.dim(-1);
        if (weight != null && weight.size() != n)
            throw new IllegalArgumentException("LayerNorm weight " + weight + " does not fit width " + n);
        if (bias != null && bias.size() != n)
            throw new IllegalArgumentException("LayerNorm bias " + bias + " does not fit width " + n);
        double[] in = x.data();
        double[] out = new double[in.length];
        for (int r = 0; r < in.length / n; r++) {
            int o = r * n;
            double mean = 0;
            for (int i = 0; i < n; i++) mean += in[o + i];
            mean /= n;
            double var = 0;
            for (int i = 0; i < n; i++) {
                double d = in[o + i] - mean;
                var += d * d;
            }
            var /= n;
            double inv = 1.0 / Math.sqrt(var + eps);
            for (int i = 0; i < n; i++) {
                double y = (in[o + i] - mean) * inv;
                if (weight != null) y *= weight.data()[i];
                if (bias != null) y += bias.data()[i];
                out[o + i] = y;
            }
        }
        return new DTensor(x.shape().clone(), out);
    }

    /** Elementwise sum of two tensors of the same shape. */
    public static DTensor add(DTensor a, DTensor b) {
        if (!Arrays.equals(a.shape(), b.shape())) throw new IllegalArgumentException("cannot add " + a + " and " + b);
        double[] out = new double[a.size()];
        for (int i = 0; i < out.length; i++) out[i] = a.data()[i] + b.data()[i];
        return new DTensor(a.shape().clone(), out);
    }

    /**
     * Cosine similarity of two flattened vectors, {@code a.b / (|a| |b|)}. By convention two all-zero vectors have
     * similarity 1 (they are identical) and an all-zero vector against a non-zero one has 0.
     */
    public static double cosineSimilarity(double[] a, double[] b) {
        if (a.length != b.length)
            throw new IllegalArgumentException("cosine similarity of lengths " + a.length + " and " + b.length);
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        if (na == 0 && nb == 0) return 1.0;
        if (na == 0 || nb == 0) return 0.0;
        return dot / (Math.sqrt(na) * Math.sqrt(nb));
    }

    /** Cosine similarity of a reference tensor and an engine tensor (flattened; shapes must match). */
    public static double cosineSimilarity(DTensor a, Tensor b) {
        if (!Arrays.equals(a.shape(), b.shape().dims()))
            throw new IllegalArgumentException("cosine similarity of " + a + " and " + b);
        return cosineSimilarity(a.data(), DTensor.of(b).data());
    }

    /** Cosine similarity of two reference tensors (flattened; shapes must match). */
    public static double cosineSimilarity(DTensor a, DTensor b) {
        if (!Arrays.equals(a.shape(), b.shape()))
            throw new IllegalArgumentException("cosine similarity of " + a + " and " + b);
        return cosineSimilarity(a.data(), b.data());
    }
}
