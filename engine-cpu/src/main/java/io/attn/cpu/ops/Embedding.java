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

    /** QEMBEDDING: the row of an int8 table, {@code (float) (q - zeroPoint) * scale} (ONNX's DequantizeLinear). */
    public static void runInt8(Node node, float[] out, float[] ids) {
        var p = node.params(io.attn.graph.OpParams.QEmbedding.class);
        byte[] table = p.table().int8();
        int v = p.table().dim(0), e = p.table().dim(1), zero = p.zeroPoint();
        float scale = p.scale();
        int n = node.input(0).shape().size();
        for (int i = 0; i < n; i++) {
            float id = ids[i];
            if (!(id >= 0f && id < v) || id != Math.rint(id))
                throw AttnException.badInput("embedding id " + id + " (position " + i + ") is not an integer in [0, "
                        + v + "): the vocabulary has V = " + v + " rows");
            for (int c = 0, row = (int) id * e; c < e; c++) out[i * e + c] = (float) (table[row + c] - zero) * scale;
        }
    }
}
