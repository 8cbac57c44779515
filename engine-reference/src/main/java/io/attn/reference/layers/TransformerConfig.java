package io.attn.reference.layers;

/**
 * Constructor arguments of {@code nn.Transformer} ({@code batch_first=True}): the layer counts plus the per-layer
 * settings shared by every encoder and decoder layer. nn.Transformer always has both final norms
 * ({@code encoder.norm}, {@code decoder.norm}).
 */
public record TransformerConfig(int numEncoderLayers, int numDecoderLayers, LayerConfig layer) {
    public TransformerConfig {
        if (numEncoderLayers < 0 || numDecoderLayers < 0) throw new IllegalArgumentException("negative layer count");
        if (layer == null) throw new IllegalArgumentException("layer config is null");
    }
}
