package io.attn.exec;

import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import java.util.ArrayList;
import java.util.List;

/**
 * Assigns every computed node of a graph to a reusable buffer slot, by liveness: a slot is free again after the last
 * node that reads its value has run. A node never shares a slot with one of its own inputs. Slots are sized to the
 * largest value they ever hold, so a run needs {@link #slotSizes()} buffers in all, allocated once and reused.
 */
public final class BufferPlan {
    private final int[] slotOf; // node id -> slot, -1 for leaves
    private final long[] slotSizes;

    public BufferPlan(Graph graph) {
        List<Node> nodes = graph.nodes();
        int[] last = graph.lastUse();
        slotOf = new int[nodes.size()];
        List<Long> sizes = new ArrayList<>();
        List<Integer> free = new ArrayList<>();
        for (Node n : nodes) {
            if (n.isLeaf() || n.op() == Op.CACHE_WRITE) { // a cache write holds its cache input's buffer
                slotOf[n.id()] = -1;
                continue;
            }
            long need = n.shape().size();
            // best fit among free slots: the smallest that is big enough, else the largest (it grows)
            int best = -1;
            for (int i = 0; i < free.size(); i++) {
                int s = free.get(i);
                if (best < 0) {
                    best = i;
                    continue;
                }
                long cur = sizes.get(free.get(best)), cand = sizes.get(s);
                boolean candFits = cand >= need, curFits = cur >= need;
                if ((candFits && (!curFits || cand < cur)) || (!candFits && !curFits && cand > cur)) best = i;
            }
            int slot;
            if (best >= 0) {
                slot = free.remove(best);
                sizes.set(slot, Math.max(sizes.get(slot), need));
            } else {
                slot = sizes.size();
                sizes.add(need);
            }
            slotOf[n.id()] = slot;
            // inputs whose last reader is this node free their slots now (after the output slot was taken)
            for (Node in : n.inputs()) {
                int si = slotOf[in.id()];
                if (si >= 0 && last[in.id()] == n.id() && !free.contains(si)) free.add(si);
            }
        }
        slotSizes = sizes.stream().mapToLong(Long::longValue).toArray();
    }

    /** The slot of a computed node, or -1 for inputs, constants and cache writes (which use their cache's buffer). */
    public int slotOf(Node n) {
        return slotOf[n.id()];
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
