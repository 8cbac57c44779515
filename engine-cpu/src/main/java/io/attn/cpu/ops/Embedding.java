package io.attn.cpu.ops;

import io.attn.AttnException;
import io.attn.graph.Node;

/** EMBEDDING: copies row {@code id} of the table {@code (V, E)} for every id; ids must be integers in {@code [0, V)}. */
public final class Embedding {
    private Embedding() {}

    public static void run(Node node, float[] out, float[] ids, float[] table) {
        int v = node.input(1).shape().dim(0), e = node.input(1).shape().dim(1);
        int n = node.input(0).shape().size();
        for (int i = 0; i < n; i++) {
            float id = ids[i];
            if (!(id >= 0f && id < v) || id != Math.rint(id))
                throw AttnException.badInput("embedding id " + id + " (position " + i + ") is not an integer in [0, "
                        + v + "): the vocabulary has V = " + v + " rows");
            System.arraycopy(table, (int) id * e, out, i * e, e);
        }
    }
}
