package io.attn.graph;

import io.attn.tensor.Tensor;

/** The parameters of each {@link Op}, one record per op. */
public sealed interface OpParams {
    record Input(String name) implements OpParams {}

    record Constant(String name, Tensor value) implements OpParams {}

    /** {@code alpha * op(A) . op(B)} where op transposes the last two dims when the flag is set. */
    /**
     * {@code alpha * op(A) . op(B)}, then, when {@code bias}, an input of length N added to every row, then, when
     * {@code relu}, {@code max(x, 0)} (NaN stays NaN), then, when {@code residual}, an input of the output's shape
     * added: exactly MATMUL, ADD_BIAS, RELU and ADD in a row, in the same float order, but in one pass (a fused
     * epilogue: a {@code torch.nn.Linear}, its ReLU, a residual connection). Inputs: A, B, then bias, then residual.
     * With {@code heads > 0} (A {@code (B, L, K)}, B a shared 2-D operand, no transA, no residual) the result is
     * stored as SPLIT_HEADS would leave it: {@code (B, heads, L, N / heads)}.
     */
    record MatMul(boolean transA, boolean transB, float alpha, boolean bias, boolean relu, boolean residual, int heads)
            implements OpParams {
        public MatMul(boolean transA, boolean transB, float alpha) {
            this(transA, transB, alpha, false, false, false, 0);
        }
    }

    record AddBias() implements OpParams {}

    record Add() implements OpParams {}

    record Scale(float factor) implements OpParams {}

    /**
     * Softmax of {@code scale * x + masks} over the last dim. With {@code product}, {@code x} is not an input but
     * {@code q k^T} of the first two inputs, q {@code (..., L, D)} and k {@code (..., S, D)} (masks follow them): the
     * attention weights in one op, so a backend can normalise each block of score rows while it is still in cache.
     */
    record Softmax(float scale, MaskSpec mask, boolean product) implements OpParams {
        public Softmax(float scale, MaskSpec mask) {
            this(scale, mask, false);
        }

        /** Index of the first mask input. */
        public int firstMask() {
            return product ? 2 : 1;
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
