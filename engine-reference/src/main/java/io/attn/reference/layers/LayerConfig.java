package io.attn.reference.layers;

/**
 * Constructor arguments of {@code nn.TransformerEncoderLayer} / {@code nn.TransformerDecoderLayer}
 * ({@code batch_first=True}, dropout irrelevant in eval mode).
 *
 * @param dModel d_model (E)
 * @param nhead number of heads (must divide dModel)
 * @param dimFeedforward dim_feedforward
 * @param activation "relu" or "gelu" (exact, erf-based)
 * @param layerNormEps layer_norm_eps
 * @param normFirst norm_first (pre-norm when true)
 * @param bias bias flag: applies to the attention in/out projections, linear1/2 and the LayerNorms, as in PyTorch
 */
public record LayerConfig(
        int dModel,
        int nhead,
        int dimFeedforward,
        String activation,
        double layerNormEps,
        boolean normFirst,
        boolean bias) {

    public LayerConfig {
        if (dModel <= 0 || nhead <= 0 || dModel % nhead != 0)
            throw new IllegalArgumentException("d_model " + dModel + " must be a positive multiple of nhead " + nhead);
        if (dimFeedforward <= 0) throw new IllegalArgumentException("dim_feedforward must be positive");
        if (!"relu".equals(activation) && !"gelu".equals(activation))
            throw new IllegalArgumentException("activation must be relu or gelu, got " + activation);
    }

    /** PyTorch's defaults apart from the sizes: relu, eps 1e-5, post-norm, bias=True. */
    public static LayerConfig of(int dModel, int nhead, int dimFeedforward) {
        return new LayerConfig(dModel, nhead, dimFeedforward, "relu", 1e-5, false, true);
    }

    public LayerConfig withActivation(String a) {
        return new LayerConfig(dModel, nhead, dimFeedforward, a, layerNormEps, normFirst, bias);
    }

    public LayerConfig withNormFirst(boolean nf) {
        return new LayerConfig(dModel, nhead, dimFeedforward, activation, layerNormEps, nf, bias);
    }

    public LayerConfig withBias(boolean b) {
        return new LayerConfig(dModel, nhead, dimFeedforward, activation, layerNormEps, normFirst, b);
    }
}
