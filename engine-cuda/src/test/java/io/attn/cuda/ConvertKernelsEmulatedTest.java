package io.attn.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.cuda.ops.Attention;
import io.attn.kernels.Kernel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code convert.cu}'s widening kernels (cuDNN's 16-bit attention output into fp32) on the host emulator, over every
 * 16-bit pattern, against Java's own conversions: {@link Float#float16ToFloat} for fp16, and the bf16 word as the top
 * half of an fp32 word ({@link Float#intBitsToFloat}). Exact (bit for bit; NaN stays NaN). Launched with the geometry
 * {@link CudnnAttention} uses ({@link Attention#convertBlocks}, {@link Attention#CONVERT_THREADS}) and with one block,
 * so the grid-stride loop is exercised. Skipped without g++; tagged {@code long} (the emulator's host build).
 */
@Tag("long")
class ConvertKernelsEmulatedTest {
    @Test
    void everySixteenBitValueWidensExactly() {
        KernelEmulator emu = KernelEmulator.get();
        String why = KernelEmulator.failure();
        // no g++: skipped; g++ present but the kernels do not compile for the host: a failure, not a silent skip
        if (emu == null && why != null && why.contains("compiling the kernel emulator failed"))
            throw new AssertionError(why);
        Assumptions.assumeTrue(emu != null, () -> "no emulator: " + why);
        int n = 1 << 16;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment x = a.allocate(JAVA_SHORT, n), out = a.allocate(JAVA_FLOAT, n + 1);
            for (int i = 0; i < n; i++) x.setAtIndex(JAVA_SHORT, i, (short) i);
            for (Kernel k : List.of(Kernel.BF16_TO_F32, Kernel.F16_TO_F32))
                for (int blocks : new int[] {Attention.convertBlocks(n), 1}) {
                    out.fill((byte) 0x55);
                    emu.launch(
                            k, blocks, 1, 1, Attention.CONVERT_THREADS, List.of(x.address(), out.address(), (long) n));
                    for (int i = 0; i < n; i++) {
                        float want = k == Kernel.BF16_TO_F32
                                ? Float.intBitsToFloat(i << 16)
                                : Float.float16ToFloat((short) i);
                        float got = out.getAtIndex(JAVA_FLOAT, i);
                        if (Float.isNaN(want)) assertTrue(Float.isNaN(got), k + " " + Integer.toHexString(i));
                        else
                            assertEquals(
                                    Float.floatToRawIntBits(want),
                                    Float.floatToRawIntBits(got),
                                    k + " of 0x" + Integer.toHexString(i) + ": " + got + ", want " + want);
                    }
                    assertEquals(0x55555555, Float.floatToRawIntBits(out.getAtIndex(JAVA_FLOAT, n)), "wrote past n");
                }
        }
    }
}
