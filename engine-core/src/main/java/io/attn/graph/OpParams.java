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

    /** Inputs: x, then weight {@code (E)} if {@code hasWeight}. */
    record RmsNorm(float eps, boolean hasWeight) implements OpParams {}

    /**
     * Rotary position embedding ({@link Op#ROPE}): base {@code theta}, the first {@code rotaryDim} dims rotated (even,
     * {@code 2 <= rotaryDim <= D}; less than D for partial rotary), positions from {@code positions} plus {@code
     * offset}. Inputs: x {@code (B, H, L, D)}, then the positions input for {@link Positions#START} ({@code (1)}) and
     * {@link Positions#IDS} ({@code (B, L)}).
     *
     * <p>The angle of position {@code p} and frequency {@code i < rotaryDim / 2} is the float32 product {@code (float)
     * p * invFreq(i)} (transformers multiplies the float32 inverse frequencies by the float32 positions); backends take
     * cos and sin of that float angle. {@code scaling} rescales the inverse frequencies (transformers' {@code
     * rope_type} {@code linear} and {@code llama3}, GTE's remote-code {@code ntk}); {@link Scaling#NONE} leaves them.
     */
    record Rope(float theta, int rotaryDim, int offset, Positions positions, Scaling scaling) implements OpParams {
        public Rope {
            java.util.Objects.requireNonNull(scaling, "scaling");
        }

        /** Unscaled frequencies ({@link Scaling#NONE}). */
        public Rope(float theta, int rotaryDim, int offset, Positions positions) {
            this(theta, rotaryDim, offset, positions, Scaling.NONE);
        }

        /**
         * A rescaling of the inverse frequencies, as transformers' {@code ROPE_INIT_FUNCTIONS} computes it in float32
         * from the default ones: {@link Kind#LINEAR} divides every frequency by {@code factor} ({@code
         * _compute_linear_scaling_rope_parameters}); {@link Kind#LLAMA3} ({@code _compute_llama3_parameters}, Llama
         * 3.1+) divides the frequencies whose wavelength {@code 2 pi / inv} exceeds {@code originalMaxPositions /
         * lowFreqFactor} by {@code factor}, keeps those under {@code originalMaxPositions / highFreqFactor}, and blends
         * the two between; {@link Kind#NTK} (the fixed NTK scaling of Alibaba-NLP's remote-code {@code
         * NTKScalingRotaryEmbedding}, gte-base-en-v1.5's and gte-multilingual-base's {@code rope_scaling: {"type":
         * "ntk"}}) takes the frequencies of base {@code theta * factor} ({@link #base}) and divides each by {@code
         * factor^(2 / rotaryDim)}. None depends on the sequence length, and none scales cos and sin.
         */
        public record Scaling(
                Kind kind, double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions) {
            public enum Kind {
                NONE,
                LINEAR,
                LLAMA3,
                NTK
            }

            public static final Scaling NONE = new Scaling(Kind.NONE, 1, 0, 0, 0);

            public Scaling {
                java.util.Objects.requireNonNull(kind, "kind");
                if (kind != Kind.NONE && !(factor > 0 && factor < Float.MAX_VALUE))
                    throw new IllegalArgumentException("rope scaling factor " + factor + " must be positive");
                if (kind == Kind.LLAMA3
                        && !(lowFreqFactor > 0
                                && highFreqFactor > lowFreqFactor
                                && highFreqFactor < Float.MAX_VALUE
                                && originalMaxPositions > 0))
                    throw new IllegalArgumentException("llama3 rope scaling needs 0 < low_freq_factor ("
                            + lowFreqFactor + ") < high_freq_factor (" + highFreqFactor
                            + ") and original_max_position_embeddings (" + originalMaxPositions + ") > 0");
            }

            /** {@code factor}'s linear scaling. */
            public static Scaling linear(double factor) {
                return new Scaling(Kind.LINEAR, factor, 0, 0, 0);
            }

            /** {@code factor}'s fixed NTK scaling (GTE's remote code, {@code mixed_b} null). */
            public static Scaling ntk(double factor) {
                return new Scaling(Kind.NTK, factor, 0, 0, 0);
            }

            /**
             * The base the default frequencies are computed from: {@code theta * factor} for {@link Kind#NTK} (the
             * remote code multiplies the Python numbers in double; torch's {@code pow} then takes the base as a
             * float32), else {@code theta}.
             */
            public float base(float theta) {
                return kind == Kind.NTK ? (float) ((double) theta * factor) : theta;
            }

            /**
             * {@link Kind#NTK}'s divisor of every frequency, {@code factor^(2 / rotaryDim)}: a Python float (double
             * power) that torch rounds to float32 against the float32 frequencies; 1 for the other kinds.
             */
            public float divisor(int rotaryDim) {
                return kind == Kind.NTK ? (float) Math.pow(factor, 2.0 / rotaryDim) : 1f;
            }

            /** Llama 3.1's scaling ({@code factor}, {@code low_freq_factor}, {@code high_freq_factor}, {@code
             * original_max_position_embeddings}). */
            public static Scaling llama3(double factor, double lowFreqFactor, double highFreqFactor, int original) {
                return new Scaling(Kind.LLAMA3, factor, lowFreqFactor, highFreqFactor, original);
            }

            /**
             * The scaled inverse frequency of {@code inv} (computed from {@link #base}), in transformers' float32
             * operations and order: torch computes {@code s / t} as {@code t.reciprocal() * s} and rounds Python
             * scalars to float32 against float32 tensors.
             */
            public float apply(float inv, int rotaryDim) {
                return switch (kind) {
                    case NONE -> inv;
                    case NTK -> inv / divisor(rotaryDim);
                    case LINEAR -> inv / (float) factor;
                    case LLAMA3 -> {
                        float f = (float) factor;
                        float wavelen = (1f / inv) * (float) (2 * Math.PI);
                        boolean low = wavelen > (float) (originalMaxPositions / lowFreqFactor);
                        boolean high = wavelen < (float) (originalMaxPositions / highFreqFactor);
                        float scaled = low ? inv / f : inv;
                        if (low || high) yield scaled;
                        float smooth = ((1f / wavelen) * (float) originalMaxPositions - (float) lowFreqFactor)
                                / (float) (highFreqFactor - lowFreqFactor);
                        yield (1f - smooth) * scaled / f + smooth * scaled;
                    }
                };
            }

            /** How {@code attn inspect} and errors name it. */
            public String describe() {
                return switch (kind) {
                    case NONE -> "none";
                    case LINEAR -> "linear, factor " + factor;
                    case NTK -> "ntk, factor " + factor;
                    case LLAMA3 ->
                        "llama3, factor " + factor + ", low_freq_factor " + lowFreqFactor
                                + ", high_freq_factor " + highFreqFactor + ", original_max_position_embeddings "
                                + originalMaxPositions;
                };
            }
        }
        /** Where a ROPE node's positions come from. */
        public enum Positions {
            /** {@code offset + l}: known when the graph is built. */
            RANGE,
            /** {@code offset + p + l}, {@code p} the runtime value of the input {@code (1)} (a decoder's cache row). */
            START,
            /** {@code offset + ids[b, l]}, ids an input {@code (B, L)} (left-padded batches). */
            IDS
        }

        /** Positions must be integral and at most this (float32 holds every integer up to 2^24 exactly). */
        public static final int MAX_POSITION = 1 << 24;

        /**
         * The inverse frequency {@code 1 / theta^(2i / rotaryDim)} of pair {@code i} (theta the scaling's {@link
         * Scaling#base base}; {@link Scaling#apply scaled}), rounded as transformers' {@code
         * _compute_default_rope_parameters} computes it in float32: the exponent {@code 2i / rotaryDim} is a float32
         * division (its rounding moves {@code theta^e} by up to ~{@code ln(theta) 2^-24} relative, 13 ulp at theta
         * 1e6), the power is rounded to float32 (here correctly, from double; torch's float32 {@code pow} differs from
         * that by 1 ulp on ~1.5% of the frequencies), the reciprocal a float32 division.
         */
        public float invFreq(int i) {
            float e = (float) (2 * i) / (float) rotaryDim;
            return scaling.apply(1f / (float) Math.pow(scaling.base(theta), e), rotaryDim);
        }

        /** The float32 angle of position {@code pos} and pair {@code i}: {@code (float) pos * invFreq(i)}. */
        public static float angle(int pos, float invFreq) {
            return (float) pos * invFreq;
        }
    }

    /**
     * {@link Op#GLU}: {@code act(a) * g} with {@code a, g} the two halves of the last dim; {@code activatedFirst}: a
     * is the first half ({@code input, gate = x.chunk(2, -1); act(input) * gate}, ModernBERT's {@code Wi}; a Llama
     * {@code act(gate(x)) * up(x)} with the weights concatenated [gate; up]), else the second (GTE's {@code
     * up_gate_proj}: {@code up, gate = split; act(gate) * up}).
     */
    record Glu(Activation act, boolean activatedFirst) implements OpParams {
        /** The activation of the gated half, with the arithmetic of {@link Op#SILU} and {@link Op#GELU}. */
        public enum Activation {
            SILU,
            GELU,
            GELU_TANH
        }
    }

    /**
     * {@link Op#QEMBEDDING}'s table: int8 {@code (V, E)} ({@link io.attn.tensor.DType#I8}), one scale and one zero point
     * (per tensor, as the embedding tables of ONNX Runtime's dynamic quantization).
     */
    record QEmbedding(io.attn.tensor.Tensor table, float scale, int zeroPoint) implements OpParams {}

    /**
     * {@link Op#QMATMUL}'s weight and quantization. Inputs: x {@code (..., K)}, float, seen as R rows of K; and
     * optionally a padded batch's key-padding mask {@code (B, L)} (x {@code (B, L, K)}, one group per sequence;
     * non-zero: a padding row, left out of its group's range, quantized like the others).
     *
     * <p>Per row group {@code G} (consecutive rows; {@code groups} holds their row counts, summing to R, or is null for
     * one group of all R rows), as ONNX Runtime's DynamicQuantizeLinear (float32 arithmetic throughout): {@code lo =
     * min(0, min G)}, {@code hi = max(0, max G)} (over G's rows that are not padding), {@code s = hi == lo ? 1 : (hi - lo) / 255}, {@code z =
     * rint(clamp(0 - lo / s, 0, 255))}, {@code q = clamp(rint(x / s) + z, 0, 255)} (rint: round half to even). Then
     * {@code acc[r][n] = sum_k (q[r][k] - z) * (w[k][n] - wZero[n])} exactly (int32, as MatMulInteger) and {@code
     * out[r][n] = (float) acc * (float) (s * wScale[n])}.
     *
     * @param weight int8 {@code (K, N)} ({@link io.attn.tensor.DType#I8}), MatMulInteger's B (the transpose of
     *     PyTorch's Linear weight)
     * @param scale the weight's scale, one value or one per output column N
     * @param zeroPoint the weight's zero point, one value or one per output column N
     * @param groups the row count of each group quantized on its own (a sequence of a batch), or null for one group
     */
    record QMatMul(io.attn.tensor.Tensor weight, float[] scale, byte[] zeroPoint, int[] groups) implements OpParams {
        /** Output columns N. */
        public int n() {
            return weight.dim(1);
        }

        /** Inner dimension K. */
        public int k() {
            return weight.dim(0);
        }

        /** The weight scale of column {@code j}. */
        public float scale(int j) {
            return scale.length == 1 ? scale[0] : scale[j];
        }

        /** The weight zero point of column {@code j}. */
        public int zeroPoint(int j) {
            return zeroPoint.length == 1 ? zeroPoint[0] : zeroPoint[j];
        }

        /** The row groups of R rows: {@code groups}, or one group of R. */
        public int[] groupsOf(int rows) {
            return groups == null ? new int[] {rows} : groups;
        }
    }
}
