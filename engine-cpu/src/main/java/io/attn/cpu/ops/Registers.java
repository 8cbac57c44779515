package io.attn.cpu.ops;

import java.util.Locale;
import jdk.incubator.vector.FloatVector;

/**
 * Which register-tile set the kernels use. AVX-512 (and AArch64) have 32 vector registers; AVX2 has 16, and C2 loads
 * every broadcast of a kernel step before its FMAs, so a kernel sized for 32 registers spills its accumulators to the
 * stack on AVX2 (seen in C2's code for the 6 x 2-vector GEMM kernel: 5 of 12 accumulators in memory; 4x slower than the
 * 512-bit build on the same Zen 5 core). With 16 the kernels pick smaller tiles: GEMM 4 x 2 vectors with A packed in
 * interleaved 4-row panels ({@link Gemm}), attention's fast path as 2 x 4-vector tiles ({@link Attention}).
 *
 * <p>Chosen once per JVM: by default from the vector width the JVM uses on x86 (at most 256 bits: 16 registers; an
 * AVX-512 machine run with {@code -XX:UseAVX=2} or {@code -XX:MaxVectorSize=32} also lands here). {@code
 * -Dattn.cpu.tiles=16} or {@code =32} forces a set, whatever the machine, so that the tests can run both tile sets on
 * any host (CI does, see {@code .ci/run}); the forced set computes the same products, only at another speed. {@code attn
 * probe} prints the choice ({@link #describe}).
 */
public final class Registers {
    private Registers() {}

    /** The property that forces a tile set: {@code 16} or {@code 32}. */
    public static final String PROPERTY = "attn.cpu.tiles";

    private static final String FORCED = System.getProperty(PROPERTY, "").trim();

    /** Whether the kernels use the tiles for 16 vector registers (AVX2). */
    static final boolean FEW = choose(FORCED, FloatVector.SPECIES_PREFERRED.vectorBitSize(), x86());

    static boolean choose(String forced, int vectorBits, boolean x86) {
        return switch (forced) {
            case "16" -> true;
            case "32" -> false;
            case "" -> vectorBits <= 256 && x86;
            default ->
                throw new IllegalArgumentException(
                        "-D" + PROPERTY + " must be 16 or 32 (vector registers of the tile set), not '" + forced + "'");
        };
    }

    private static boolean x86() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return arch.equals("amd64") || arch.equals("x86_64") || arch.equals("x86") || arch.matches("i[3-6]86");
    }

    /** 16 or 32: the vector registers the chosen tile set is sized for. */
    public static int tiles() {
        return FEW ? 16 : 32;
    }

    /**
     * The tile set and why, e.g. {@code tiles for 16 registers (GEMM 4 x 2 vectors, A interleaved; attention 2 x 4),
     * from 256-bit vectors on x86}.
     */
    public static String describe() {
        String set = FEW
                ? "tiles for 16 registers (GEMM " + Gemm.MR + " x 2 vectors"
                        + (Gemm.host().packA() ? ", A interleaved" : "") + "; attention 2 x 4 vectors)"
                : "tiles for 32 registers (GEMM " + Gemm.MR + " x 2 vectors"
                        + (Gemm.host().packA() ? ", A interleaved" : "") + "; attention 6 x 4 vectors)";
        String why = FORCED.isEmpty()
                ? "from " + FloatVector.SPECIES_PREFERRED.vectorBitSize() + "-bit vectors" + (x86() ? " on x86" : "")
                : "forced by -D" + PROPERTY + "=" + FORCED;
        return set + ", " + why;
    }
}
