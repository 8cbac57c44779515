package io.attn.nn;

import io.attn.graph.Node;

/**
 * The sinusoidal positional encoding of "Attention Is All You Need", added to {@code x (B, L, E)}: {@code PE[pos, 2i]
 * = sin(pos / 10000^(2i/E))}, {@code PE[pos, 2i+1] = cos(pos / 10000^(2i/E))}, positions starting at {@code offset}.
 */
public final class PositionalEncoding {
    private PositionalEncoding() {}

    public static Node forward(Forward f, Node x, int offset) {
        return f.g.positionalEncoding(x, offset);
    }
}
