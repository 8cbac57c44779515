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
    private static final VectorShuffle<Float>[] ROTATIONS = rotations();

    private Lanes() {}

    @SuppressWarnings("unchecked")
    private static VectorShuffle<Float>[] rotations() {
        int n = SP.length(), steps = Integer.numberOfTrailingZeros(n); // lane counts are powers of two
        VectorShuffle<Float>[] r = (VectorShuffle<Float>[]) new VectorShuffle<?>[steps];
        for (int s = 0, k = n / 2; s < steps; s++, k /= 2) {
            int shift = k;
            r[s] = VectorShuffle.fromOp(SP, i -> (i + shift) % n);
        }
        return r;
    }

    /** The sum of the lanes of {@code v} (a {@link FloatVector#SPECIES_PREFERRED} vector), in a fixed order. */
    public static float sum(FloatVector v) {
        for (VectorShuffle<Float> r : ROTATIONS) v = v.add(v.rearrange(r));
        return v.lane(0);
    }

    /**
     * The largest lane of {@code v} (a {@link FloatVector#SPECIES_PREFERRED} vector), by compare-and-blend over the
     * same rotations: cheaper than {@code reduceLanes(MAX)} with Java's NaN rules. A NaN lane may or may not win, so a
     * caller may rely on the result only when it is finite (then no lane was NaN-free and larger: every non-NaN lane
     * is at most the result).
     */
    public static float max(FloatVector v) {
        for (VectorShuffle<Float> r : ROTATIONS) {
            FloatVector y = v.rearrange(r);
            v = v.blend(y, v.compare(VectorOperators.LT, y));
        }
        return v.lane(0);
    }
}
