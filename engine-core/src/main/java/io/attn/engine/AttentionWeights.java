package io.attn.engine;

/** Which attention weights a call returns besides its output. Immutable (an enum), thread-safe. */
public enum AttentionWeights {
    /** None (the default): attention runs fused and no {@code L x S} matrix is kept. */
    NONE,
    /** Averaged over heads, {@code (B, L, S)}, as {@code nn.MultiheadAttention} returns them by default. */
    AVERAGED,
    /** One matrix per head, {@code (B, H, L, S)}. */
    PER_HEAD
}
