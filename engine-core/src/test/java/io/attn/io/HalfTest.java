package io.attn.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Hand-worked bit patterns (IEEE 754 binary16 and bfloat16 tables), compared exactly. */
class HalfTest {
    private static void eq(float want, float got) {
        assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(got), want + " vs " + got);
    }

    @Test
    void halfToFloat() {
        eq(1f, Half.toFloat((short) 0x3C00));
        eq(-2f, Half.toFloat((short) 0xC000));
        eq(0.5f, Half.toFloat((short) 0x3800));
        eq(65504f, Half.toFloat((short) 0x7BFF)); // largest finite
        eq(0x1p-14f, Half.toFloat((short) 0x0400)); // smallest normal
        eq(0x1p-24f, Half.toFloat((short) 0x0001)); // smallest subnormal
        eq(1023 * 0x1p-24f, Half.toFloat((short) 0x03FF)); // largest subnormal
        eq(-0x1p-24f, Half.toFloat((short) 0x8001));
        eq(0f, Half.toFloat((short) 0x0000));
        eq(-0f, Half.toFloat((short) 0x8000));
        eq(Float.POSITIVE_INFINITY, Half.toFloat((short) 0x7C00));
        eq(Float.NEGATIVE_INFINITY, Half.toFloat((short) 0xFC00));
        assertTrue(Float.isNaN(Half.toFloat((short) 0x7E00)));
        assertTrue(Float.isNaN(Half.toFloat((short) 0x7C01)));
        eq(1 + 0x1p-10f, Half.toFloat((short) 0x3C01));
    }

    @Test
    void floatToHalf() {
        assertEquals((short) 0x3C00, Half.fromFloat(1f));
        assertEquals((short) 0x0001, Half.fromFloat(0x1p-24f));
        assertEquals((short) 0x7C00, Half.fromFloat(65520f)); // rounds up to infinity
        assertEquals((short) 0x7BFF, Half.fromFloat(65519f));
        assertEquals((short) 0x3C00, Half.fromFloat(1 + 0x1p-11f)); // tie -> even
        assertEquals((short) 0x3C02, Half.fromFloat(1 + 3 * 0x1p-11f)); // tie -> even (up)
        for (int h = 0; h < 0x10000; h++) { // every finite half survives a round trip
            short s = (short) h;
            float f = Half.toFloat(s);
            if (!Float.isNaN(f)) assertEquals(s, Half.fromFloat(f));
        }
    }

    @Test
    void bf16() {
        eq(1f, Bf16.toFloat((short) 0x3F80));
        eq(-1.5f, Bf16.toFloat((short) 0xBFC0));
        eq(0x1p-133f, Bf16.toFloat((short) 0x0001)); // smallest subnormal
        eq(0x1p-126f, Bf16.toFloat((short) 0x0080)); // smallest normal
        eq(Float.POSITIVE_INFINITY, Bf16.toFloat((short) 0x7F80));
        eq(-0f, Bf16.toFloat((short) 0x8000));
        assertTrue(Float.isNaN(Bf16.toFloat((short) 0x7FC0)));
        assertEquals((short) 0x3F80, Bf16.fromFloat(1f + 0x1p-8f)); // exact tie -> even (down)
        assertEquals((short) 0x3F82, Bf16.fromFloat(1f + 3 * 0x1p-8f)); // exact tie -> even (up)
        assertEquals((short) 0x3F81, Bf16.fromFloat(1f + 0x1p-8f + 0x1p-20f)); // above the tie -> up
        assertEquals((short) 0x7F80, Bf16.fromFloat(Float.MAX_VALUE)); // overflows to infinity
        assertTrue(Float.isNaN(Bf16.toFloat(Bf16.fromFloat(Float.intBitsToFloat(0x7F800001))))); // NaN stays NaN
    }
}
