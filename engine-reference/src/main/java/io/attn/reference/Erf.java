package io.attn.reference;

/**
 * The error function in double precision, written from two textbook expansions (Abramowitz and Stegun, Handbook of
 * Mathematical Functions, 1964):
 *
 * <ul>
 *   <li>|x| &lt; 1.5: the series A&amp;S 7.1.6, {@code erf x = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1.3.5...(2n+1))};
 *       every term is positive, so summing it loses nothing to cancellation;
 *   <li>|x| &gt;= 1.5: the continued fraction A&amp;S 7.1.14 for the complement, {@code erfc x = e^(-x^2)/sqrt(pi) *
 *       1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))}, evaluated bottom-up from a fixed depth.
 * </ul>
 *
 * Measured against mpmath (40 digits) on x = -8, -7.99, ..., 8: relative error below 1e-15 for erf and 1e-14 for
 * erfc; checked against a table in {@code ReferenceTest}. Deliberately plain: this is part of the judge, not of the engine.
 */
public final class Erf {
    private Erf() {}

    private static final double TWO_OVER_SQRT_PI = 2.0 / Math.sqrt(Math.PI);
    private static final double ONE_OVER_SQRT_PI = 1.0 / Math.sqrt(Math.PI);
    private static final double SWITCH = 1.5;

    /** erf(x). */
    public static double erf(double x) {
        if (Double.isNaN(x)) return Double.NaN;
        double a = Math.abs(x);
        double r = a < SWITCH ? series(a) : 1.0 - cfErfc(a);
        return x < 0 ? -r : r;
    }

    /** erfc(x) = 1 - erf(x), without the cancellation for large x. */
    public static double erfc(double x) {
        if (Double.isNaN(x)) return Double.NaN;
        if (x >= SWITCH) return cfErfc(x);
        if (x <= -SWITCH) return 2.0 - cfErfc(-x);
        return 1.0 - erf(x);
    }

    // A&S 7.1.6: positive terms, ratio t_{n+1}/t_n = 2x^2/(2n+3)
    private static double series(double x) {
        double x2 = x * x;
        double term = x, sum = x;
        for (int n = 0; n < 500; n++) {
            term *= 2.0 * x2 / (2 * n + 3);
            sum += term;
            if (term < sum * 1e-17) break;
        }
        return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
    }

    // A&S 7.1.14, evaluated from depth 200 upwards (enough for x >= 1.5 to full double precision)
    private static double cfErfc(double x) {
        if (x == Double.POSITIVE_INFINITY) return 0.0;
        double f = x;
        for (int k = 200; k >= 1; k--) f = x + (k / 2.0) / f;
        return ONE_OVER_SQRT_PI * Math.exp(-x * x) / f;
    }
}
