package io.attn.cuda;

/**
 * Plain double-precision reference loops for the GPU tests, written from the op definitions (Op / MaskSpec javadoc),
 * independently of the kernels. Arrays are row-major.
 */
final class Ref {
    private Ref() {}

    /** C (batch, m, n) = alpha op(A) op(B); B shared when {@code sharedB}. */
    static double[] matmul(
            float[] a,
            float[] b,
            int batch,
            int m,
            int n,
            int k,
            boolean ta,
            boolean tb,
            float alpha,
            boolean sharedB) {
        double[] c = new double[batch * m * n];
        for (int z = 0; z < batch; z++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++) {
                        double av = ta ? a[z * m * k + p * m + i] : a[z * m * k + i * k + p];
                        int bo = sharedB ? 0 : z * k * n;
                        double bv = tb ? b[bo + j * k + p] : b[bo + p * n + j];
                        s += av * bv;
                    }
                    c[(z * m + i) * n + j] = alpha * s;
                }
        return c;
    }

    /**
     * Masked softmax of scores (B, H, L, S): causal, attn mask (B|1, H|1, L, S) with kind 0/1/2 (none, bool,
     * additive), key padding (B, S) likewise; a fully masked row is all zeros.
     */
    static double[] softmax(
            float[] x,
            int bb,
            int hh,
            int ll,
            int ss,
            double scale,
            boolean causal,
            float[] mask,
            int mb,
            int mh,
            int maskKind,
            float[] kpm,
            int kpmKind) {
        double[] y = new double[x.length];
        double[] s = new double[ss];
        for (int b = 0; b < bb; b++)
            for (int h = 0; h < hh; h++)
                for (int i = 0; i < ll; i++) {
                    int row = ((b * hh + h) * ll + i) * ss;
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < ss; j++) {
                        double v = scale * x[row + j];
                        boolean masked = causal && j > i;
                        if (maskKind != 0) {
                            float mv = mask[(((mb == 1 ? 0 : b) * mh + (mh == 1 ? 0 : h)) * ll + i) * ss + j];
                            if (maskKind == 1) masked |= mv != 0;
                            else v += mv;
                        }
                        if (kpmKind != 0) {
                            float kv = kpm[b * ss + j];
                            if (kpmKind == 1) masked |= kv != 0;
                            else v += kv;
                        }
                        s[j] = masked ? Double.NEGATIVE_INFINITY : v;
                        max = Math.max(max, s[j]);
                    }
                    if (max == Double.NEGATIVE_INFINITY) continue; // zeros
                    double sum = 0;
                    for (int j = 0; j < ss; j++) sum += Math.exp(s[j] - max);
                    for (int j = 0; j < ss; j++) y[row + j] = Math.exp(s[j] - max) / sum;
                }
        return y;
    }

    /** P (B,H,L,S) . V (B,H,S,Dv). */
    static double[] weightsTimesV(double[] p, float[] v, int bh, int ll, int ss, int dv) {
        double[] o = new double[bh * ll * dv];
        for (int z = 0; z < bh; z++)
            for (int i = 0; i < ll; i++)
                for (int d = 0; d < dv; d++) {
                    double s = 0;
                    for (int j = 0; j < ss; j++) s += p[(z * ll + i) * ss + j] * v[(z * ss + j) * dv + d];
                    o[(z * ll + i) * dv + d] = s;
                }
        return o;
    }

    static double[] layerNorm(float[] x, int rows, int e, float[] w, float[] b, double eps) {
        double[] y = new double[x.length];
        for (int r = 0; r < rows; r++) {
            double mean = 0, var = 0;
            for (int j = 0; j < e; j++) mean += x[r * e + j];
            mean /= e;
            for (int j = 0; j < e; j++) var += (x[r * e + j] - mean) * (x[r * e + j] - mean);
            var /= e;
            for (int j = 0; j < e; j++) y[r * e + j] = (x[r * e + j] - mean) / Math.sqrt(var + eps) * w[j] + b[j];
        }
        return y;
    }

    /** erf by its Maclaurin series (|x| <= 3 here) or the continued tail: accurate to ~1e-12 in the test range. */
    static double erf(double x) {
        if (Math.abs(x) > 3) return Math.signum(x) * (1 - erfcTail(Math.abs(x)));
        double sum = 0, term = x;
        for (int n = 0; n < 200; n++) {
            sum += term / (2 * n + 1);
            term *= -x * x / (n + 1);
        }
        return 2 / Math.sqrt(Math.PI) * sum;
    }

    private static double erfcTail(double x) { // continued fraction, x > 3
        double f = 0;
        for (int n = 60; n >= 1; n--) f = n / 2.0 / (x + f);
        return Math.exp(-x * x) / Math.sqrt(Math.PI) / (x + f);
    }
}
