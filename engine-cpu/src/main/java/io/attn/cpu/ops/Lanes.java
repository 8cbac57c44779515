package io.attn.cpu.ops;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * A lane sum in a fixed order. {@code reduceLanes(ADD)} leaves the order of the float additions unspecified, and the
 * interpreter and the JIT-compiled code do use different orders, so the same row could sum to a different last bit
 * before and after warm-up (and a library call would not reproduce an earlier one bitwise). This sum is a fixed tree:
 * rotate by half the lanes and add, then by a quarter, ..., then take lane 0 — plain lane-wise IEEE additions that
 * every execution mode computes alike.
 *
 * <p>Stateless, thread-safe.
 */
public final class Lanes {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    /** log2 of the lane count (lane counts are powers of two, at most 16 floats in 512 bits). */
    private static final int STEPS = Integer.numberOfTrailingZeros(SP.length());
    // rotations by half the lanes, a quarter, an eighth, a sixteenth: constants each (static final), which C2 folds
    // into the permutes; an array of them, looped over, compiled poorly where the loop was inlined into a large method
    private static final VectorShuffle<Float> R1 = rotation(1), R2 = rotation(2), R3 = rotation(3), R4 = rotation(4);

    private Lanes() {}

    /** The rotation by {@code n / 2^s} lanes (by 1 where that is less than a lane; then it is not used). */
    private static VectorShuffle<Float> rotation(int s) {
        int n = SP.length(), shift = Math.max(1, n >> s);
        return VectorShuffle.fromOp(SP, i -> (i + shift) % n);
    }

    /** The sum of the lanes of {@code v} (a {@link FloatVector#SPECIES_PREFERRED} vector), in a fixed order. */
    public static float sum(FloatVector v) {
        if (STEPS >= 1) v = v.add(v.rearrange(R1));
        if (STEPS >= 2) v = v.add(v.rearrange(R2));
        if (STEPS >= 3) v = v.add(v.rearrange(R3));
        if (STEPS >= 4) v = v.add(v.rearrange(R4));
        return v.lane(0);
    }

    /**
     * {@link #sum(FloatVector)} of the vector stored at {@code a[o..]}, bitwise (the same additions in the same order):
     * for a loop that keeps its vector accumulator in memory rather than pass it to a call C2 might not inline ({@link
     * VExp#exp2Sub}). The rotations are written out here, not delegated to {@link #sum(FloatVector)}: inlined into a
     * large method, that call could be declined and its vector boxed. (A scalar form, tried 2026-12-06, gave the same
     * bits but {@link #max(float[], int)}'s compares became branches on data, mispredicted: 7% of a MiniLM-shaped
     * attention's samples on a Zen 4, 2026-12-07.)
     */
    public static float sum(float[] a, int o) {
        FloatVector v = FloatVector.fromArray(SP, a, o);
        if (STEPS >= 1) v = v.add(v.rearrange(R1));
        if (STEPS >= 2) v = v.add(v.rearrange(R2));
        if (STEPS >= 3) v = v.add(v.rearrange(R3));
        if (STEPS >= 4) v = v.add(v.rearrange(R4));
        return v.lane(0);
    }

    /**
     * The largest lane of {@code v} (a {@link FloatVector#SPECIES_PREFERRED} vector), by compare-and-blend over the
     * same rotations: cheaper than {@code reduceLanes(MAX)} with Java's NaN rules. A NaN lane may or may not win, so a
     * caller may rely on the result only when it is finite (then no lane was NaN-free and larger: every non-NaN lane
     * is at most the result).
     */
    public static float max(FloatVector v) {
        if (STEPS >= 1) v = maxStep(v, R1);
        if (STEPS >= 2) v = maxStep(v, R2);
        if (STEPS >= 3) v = maxStep(v, R3);
        if (STEPS >= 4) v = maxStep(v, R4);
        return v.lane(0);
    }

    /**
     * {@link #max(FloatVector)} of the vector stored at {@code a[o..]}, the same lanes chosen in the same order, written
     * out as {@link #sum(float[], int)} is (for the same reasons).
     */
    public static float max(float[] a, int o) {
        FloatVector v = FloatVector.fromArray(SP, a, o), y;
        if (STEPS >= 1) v = v.blend(y = v.rearrange(R1), v.compare(VectorOperators.LT, y));
        if (STEPS >= 2) v = v.blend(y = v.rearrange(R2), v.compare(VectorOperators.LT, y));
        if (STEPS >= 3) v = v.blend(y = v.rearrange(R3), v.compare(VectorOperators.LT, y));
        if (STEPS >= 4) v = v.blend(y = v.rearrange(R4), v.compare(VectorOperators.LT, y));
        return v.lane(0);
    }

    private static FloatVector maxStep(FloatVector v, VectorShuffle<Float> r) {
        FloatVector y = v.rearrange(r);
        return v.blend(y, v.compare(VectorOperators.LT, y));
    }
}
