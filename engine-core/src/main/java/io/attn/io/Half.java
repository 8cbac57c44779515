package io.attn.io;

/**
 * IEEE 754 binary16 ("float16", numpy {@code f2}, safetensors {@code F16}) conversions. Subnormals, signed zeros,
 * infinities and NaN convert exactly; float to half rounds to nearest, ties to even. Delegates to the JDK's
 * {@link Float#float16ToFloat} / {@link Float#floatToFloat16}, which the JIT compiles to single instructions.
 */
public final class Half {
    private Half() {}

    /** The float value of the half-precision bits {@code h}. */
    public static float toFloat(short h) {
        return Float.float16ToFloat(h);
    }

    /** The half-precision bits nearest to {@code f} (ties to even; overflow gives infinity). */
    public static short fromFloat(float f) {
        return Float.floatToFloat16(f);
    }
}
