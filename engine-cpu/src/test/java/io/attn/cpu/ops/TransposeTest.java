package io.attn.cpu.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The in-register 16 x 16 transpose against the index definition, element by element (exact: one multiply each). */
class TransposeTest {
    @Test
    void blockIsTheScaledTranspose() {
        assumeTrue(Transpose.AVAILABLE, "needs 512-bit vectors");
        Random r = new Random(3);
        int stride = 37, ld = 21; // odd strides and offsets: nothing may rely on alignment
        float[] src = new float[5 + 16 * stride], dst = new float[3 + 16 * ld];
        for (int i = 0; i < src.length; i++) src[i] = r.nextFloat() - 0.5f;
        Transpose.block16(src, 5, stride, dst, 3, ld, 0.75f);
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++)
                assertEquals(src[5 + i * stride + j] * 0.75f, dst[3 + j * ld + i], "element " + i + "," + j);
    }
}
