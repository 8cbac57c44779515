package io.attn.engine;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The outputs of one call: the module's output and, when asked for, the attention weights of every attention block by
 * block name ({@code attn} for a {@code MultiheadAttention} model, {@code self_attn} for {@code SelfAttention} and
 * single layers, {@code layers.0.self_attn}, {@code decoder.layers.1.multihead_attn}, ...), in the order the blocks
 * ran.
 *
 * <p>Immutable and thread-safe (the tensors are fresh arrays owned by the caller).
 */
public record Result(Tensor output, Map<String, Tensor> attentionWeights) {
    public Result {
        attentionWeights = Collections.unmodifiableMap(new LinkedHashMap<>(attentionWeights));
    }

    /** The weights of one block. */
    public Tensor attentionWeights(String block) {
        Tensor t = attentionWeights.get(block);
        if (t == null)
            throw AttnException.badInput("no attention weights for block '" + block + "' (have "
                    + attentionWeights.keySet() + "; ask for them with AttentionWeights.AVERAGED or PER_HEAD)");
        return t;
    }
}
