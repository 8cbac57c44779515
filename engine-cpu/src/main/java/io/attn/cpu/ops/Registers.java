package io.attn.cpu.ops;

import java.util.Locale;
import jdk.incubator.vector.FloatVector;

/**
 * How many vector registers the register-blocked kernels may assume. AVX-512 (and AArch64) have 32; AVX2 has 16,
 * and C2 loads every broadcast of a kernel step before its FMAs, so a kernel sized for 32 registers spills its
 * accumulators to the stack on AVX2 (seen in C2's code for the 6 x 2-vector GEMM kernel: 5 of 12 accumulators in
 * memory; 4x slower than the 512-bit build on the same Zen 5 core). The kernels pick a smaller tile there.
 */
final class Registers {
    private Registers() {}

    /**
     * x86 with vectors of at most 256 bits: AVX2, 16 registers (an AVX-512 machine run with {@code
     * -XX:MaxVectorSize=32} also lands here and only loses some reuse).
     */
    static final boolean FEW = FloatVector.SPECIES_PREFERRED.vectorBitSize() <= 256 && x86();

    private static boolean x86() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return arch.equals("amd64") || arch.equals("x86_64") || arch.equals("x86") || arch.matches("i[3-6]86");
    }
}
