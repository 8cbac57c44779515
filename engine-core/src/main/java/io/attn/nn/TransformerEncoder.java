package io.attn.nn;

import io.attn.graph.Node;
import java.util.ArrayList;
import java.util.List;

/** {@code torch.nn.TransformerEncoder}: {@code layers.N.*} then an optional final {@code norm.*}. */
public final class TransformerEncoder {
    private final List<TransformerEncoderLayer> layers = new ArrayList<>();
    private final LayerNorm norm;

    public TransformerEncoder(StateDict sd, String prefix, LayerConfig c, int numLayers, boolean finalNorm) {
        if (numLayers <= 0) throw io.attn.AttnException.badInput("num_layers must be positive, got " + numLayers);
        for (int i = 0; i < numLayers; i++)
            layers.add(new TransformerEncoderLayer(sd, prefix + "layers." + i + ".", c));
        norm = finalNorm ? LayerNorm.load(sd, prefix + "norm.", c.dModel(), c.layerNormEps(), c.bias()) : null;
    }

    public Node forward(Forward f, Node x, Masks masks) {
        for (TransformerEncoderLayer l : layers) x = l.forward(f, x, masks);
        return norm == null ? x : norm.forward(f, x);
    }
}
