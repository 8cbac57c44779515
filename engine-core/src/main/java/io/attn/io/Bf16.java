package io.attn.io;

/**
 * bfloat16 conversions (safetensors {@code BF16}): the top 16 bits of a float32. Widening is exact; narrowing rounds to
 * nearest, ties to even, and keeps NaN a NaN.
 */
public final class Bf16 {
    private Bf16() {}

    /** The float value of the bfloat16 bits {@code b}. */
    public static float toFloat(short b) {
        return Float.intBitsToFloat((b & 0xffff) << 16);
    }

    /** The bfloat16 bits nearest to {@code f}. */
    public static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) return (short) ((bits >>> 16) | 0x0040); // quiet NaN, sign kept
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }
}
