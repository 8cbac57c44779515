package io.attn.io;

import java.nio.charset.StandardCharsets;

/** Parses decimal floating-point text from bytes without creating Strings on the common path. */
final class Decimal {
    private Decimal() {}

    private static final double[] POW10 = new double[23];

    static {
        double p = 1;
        for (int k = 0; k < POW10.length; k++) {
            POW10[k] = p;
            p *= 10;
        }
    }

    /**
     * Parses {@code [s, e)} of {@code b} as {@code [+-]digits[.digits][(e|E)[+-]digits]} and returns the nearest
     * float; returns NaN when the text does not match that grammar or the value overflows float32 (so NaN means "not
     * a finite number": nan/inf literals are refused). Values with at most 15 significant digits and a decimal exponent
     * within +-22 are computed in double with a single correctly rounded multiply or divide and then narrowed to float;
     * the rare doubles where that second rounding could go wrong (exact float halfway points, float subnormals) and
     * all other inputs go through {@link Float#parseFloat}, so the result always equals {@code Float.parseFloat}.
     */
    static float parse(byte[] b, int s, int e) {
        int k = s;
        boolean neg = false;
        if (k < e && (b[k] == '-' || b[k] == '+')) {
            neg = b[k] == '-';
            k++;
        }
        long m = 0;
        int digits = 0, exp = 0, mantDigits = 0;
        boolean sig = false;
        int start = k;
        while (k < e && b[k] >= '0' && b[k] <= '9') {
            int d = b[k] - '0';
            if (sig || d != 0) {
                sig = true;
                if (mantDigits < 18) {
                    m = m * 10 + d;
                    mantDigits++;
                } else exp++;
                digits++;
            }
            k++;
        }
        int intEnd = k;
        if (k < e && b[k] == '.') {
            k++;
            while (k < e && b[k] >= '0' && b[k] <= '9') {
                int d = b[k] - '0';
                if (sig || d != 0) {
                    sig = true;
                    if (mantDigits < 18) {
                        m = m * 10 + d;
                        mantDigits++;
                        exp--;
                    }
                    digits++;
                } else exp--;
                k++;
            }
            if (k - 1 == intEnd && intEnd == start) return Float.NaN; // just "."
        } else if (intEnd == start) return Float.NaN; // no digits (nan/inf are refused: vectors must be finite)
        if (k < e && (b[k] == 'e' || b[k] == 'E')) {
            k++;
            boolean eneg = false;
            if (k < e && (b[k] == '-' || b[k] == '+')) {
                eneg = b[k] == '-';
                k++;
            }
            int es = k;
            int ev = 0;
            while (k < e && b[k] >= '0' && b[k] <= '9') {
                if (ev < 100000) ev = ev * 10 + (b[k] - '0');
                k++;
            }
            if (k == es) return Float.NaN;
            exp += eneg ? -ev : ev;
        }
        if (k != e) return Float.NaN;
        float r;
        if (m == 0) r = 0f;
        else if (mantDigits <= 15 && digits == mantDigits && exp >= -22 && exp <= 22) {
            double d = exp >= 0 ? m * POW10[exp] : m / POW10[-exp];
            // d is the correctly rounded double; narrowing it can round wrongly only if d sits exactly on a float
            // halfway point (low 29 mantissa bits 1000...0) or in the float subnormal range: parse those exactly
            long bits = Double.doubleToRawLongBits(d);
            if ((bits & 0x1FFFFFFFL) == 0x10000000L || d < Float.MIN_NORMAL)
                r = Float.parseFloat(new String(b, s, e - s, StandardCharsets.ISO_8859_1));
            else r = (float) d;
        } else r = Float.parseFloat(new String(b, s, e - s, StandardCharsets.ISO_8859_1));
        if (Float.isInfinite(r)) return Float.NaN;
        return neg ? -Math.abs(r) : r;
    }
}
