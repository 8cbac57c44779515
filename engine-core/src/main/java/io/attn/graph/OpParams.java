package io.attn.graph;

import io.attn.tensor.Tensor;

/** The parameters of each {@link Op}, one record per op. */
public sealed interface OpParams {
    record Input(String name) implements OpParams {}

    record Constant(String name, Tensor value) implements OpParams {}

    /**
     * {@code alpha * op(A) . op(B)} where op transposes the last two dims when the flag is set: {@code torch.matmul}
     * (with {@code alpha}, the scale PyTorch applies to a product, e.g. {@code baddbmm}'s). A bias, an activation, a
     * residual or a split into heads after it are nodes of their own; a backend may fuse them ({@code Backend.compile}).
     */
    record MatMul(boolean transA, boolean transB, float alpha) implements OpParams {}

    record AddBias() implements OpParams {}

    record Add() implements OpParams {}

    record Scale(float factor) implements OpParams {}

    /** Softmax of {@code scale * x + masks} over the last dim. Inputs: x, then the masks named by {@code mask}. */
    record Softmax(float scale, MaskSpec mask) implements OpParams {
        /** Index of the first mask input. */
        public int firstMask() {
            return 1;
        }
    }

    /** Inputs: x, then weight if {@code hasWeight}, then bias if {@code hasBias}. */
    record LayerNorm(float eps, boolean hasWeight, boolean hasBias) implements OpParams {}

    record Relu() implements OpParams {}

    /** SILU has no parameters. */
    record Silu() implements OpParams {}

    /** {@code tanh}: PyTorch's {@code approximate='tanh'}; otherwise the exact erf form. */
    record Gelu(boolean tanh) implements OpParams {}

    record Embedding() implements OpParams {}

    /** Positions start at {@code offset} (non-zero in incremental decoding). */
    record PositionalEncoding(int offset) implements OpParams {}

    record SplitHeads(int heads) implements OpParams {}

    record MergeHeads() implements OpParams {}

    record Concat(int axis) implements OpParams {}

    record Mean(int axis) implements OpParams {}

    /** Inputs: q, k, v, then the masks named by {@code mask}. */
    record Attention(float scale, MaskSpec mask) implements OpParams {}

    /** Inputs: cache {@code (B, H, C, D)}, x {@code (B, H, L, D)}, pos {@code (1)}. */
    record CacheWrite() implements OpParams {}
}
