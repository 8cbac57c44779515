package io.attn.exec;

import io.attn.backend.Program;
import io.attn.graph.Node;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Assigns every value a {@link Program} stores, and every step's scratch memory, to a reusable buffer slot, by
 * liveness: a slot is free again after the last step that reads its value has run (a scratch slot, right after its
 * step). A step never shares a slot with one of its own inputs, and its scratch is apart from both. Values fused away
 * inside a step get no slot at all. Slots are sized to the largest value they ever hold, so a run needs {@link
 * #slotSizes()} buffers in all, allocated once and reused.
 */
public final class BufferPlan {
    private final int[] slotOf; // node id -> slot, -1 for leaves, in-place outputs and nodes fused away
    private final int[] scratchOf; // step index -> slot, -1 for none
    private final long[] slotSizes;

    public BufferPlan(Program program) {
        List<Node> nodes = program.graph().nodes();
        List<Program.Step> steps = program.steps();
        int[] last = new int[nodes.size()]; // node id -> index of the last step reading it
        for (int s = 0; s < steps.size(); s++) for (Node in : steps.get(s).inputs()) last[in.id()] = s;
        for (Node o : program.graph().outputs()) last[o.id()] = steps.size();
        slotOf = new int[nodes.size()];
        Arrays.fill(slotOf, -1);
        scratchOf = new int[steps.size()];
        Arrays.fill(scratchOf, -1);
        List<Long> sizes = new ArrayList<>();
        List<Integer> free = new ArrayList<>();
        for (int s = 0; s < steps.size(); s++) {
            Program.Step step = steps.get(s);
            if (step.inPlace() < 0)
                slotOf[step.output().id()] =
                        take(free, sizes, step.output().shape().size());
            if (step.scratch() > 0) scratchOf[s] = take(free, sizes, step.scratch());
            if (scratchOf[s] >= 0) free.add(scratchOf[s]);
            // inputs whose last reader is this step free their slots now (after the output slot was taken)
            for (Node in : step.inputs()) {
                int si = slotOf[in.id()];
                if (si >= 0 && last[in.id()] == s && !free.contains(si)) free.add(si);
            }
        }
        slotSizes = sizes.stream().mapToLong(Long::longValue).toArray();
    }

    /** Best fit among free slots: the smallest that is big enough, else the largest (it grows); else a new slot. */
    private static int take(List<Integer> free, List<Long> sizes, long need) {
        int best = -1;
        for (int i = 0; i < free.size(); i++) {
            if (best < 0) {
                best = i;
                continue;
            }
            long cur = sizes.get(free.get(best)), cand = sizes.get(free.get(i));
            boolean candFits = cand >= need, curFits = cur >= need;
            if ((candFits && (!curFits || cand < cur)) || (!candFits && !curFits && cand > cur)) best = i;
        }
        if (best < 0) {
            sizes.add(need);
            return sizes.size() - 1;
        }
        int slot = free.remove(best);
        sizes.set(slot, Math.max(sizes.get(slot), need));
        return slot;
    }

    /**
     * The slot of a value a step stores, or -1 for inputs, constants, in-place outputs (which use their input's buffer)
     * and nodes fused away.
     */
    public int slotOf(Node n) {
        return slotOf[n.id()];
    }

    /** The scratch slot of step {@code step}, or -1 when it asks for none. */
    public int scratchOf(int step) {
        return scratchOf[step];
    }

    public long[] slotSizes() {
        return slotSizes.clone();
    }

    /** Total elements across slots (the planned working memory of one run). */
    public long totalElements() {
        long t = 0;
        for (long s : slotSizes) t += s;
        return t;
    }
}
