package io.attn.nn;

import io.attn.engine.AttentionWeights;
import io.attn.tensor.Shape;
import java.util.List;
import java.util.Map;

/**
 * What a model's forward graph depends on besides its weights: the shapes fed, the masks (by their PyTorch argument
 * name, with their shape and whether they are bool), the causal flags, the attention weights wanted and, for a ragged
 * batch of token ids, the sequences' lengths. Calls with equal signatures share one built graph ({@link GraphCache}).
 *
 * <p>Inputs are in the graph's layout: embeddings {@code (B, L, E)} (memory, target alike), token ids {@code (B, L)};
 * attention masks {@code (L, S)} or {@code (B, H, L, S)}, key-padding masks {@code (B, S)}.
 *
 * @param memory null unless the module has a decoder's cross-attention and one was fed
 * @param target null unless the module is a whole {@code Transformer}
 * @param masks by PyTorch argument name ({@code attn_mask}, {@code tgt_key_padding_mask}, ...), each fed as a graph
 *     input of that name
 * @param segments the lengths of a ragged batch's sequences (token models only), else null
 */
public record Signature(
        Shape input,
        Shape memory,
        Shape target,
        Map<String, MaskSig> masks,
        boolean causal,
        boolean memoryCausal,
        AttentionWeights weights,
        List<Integer> segments) {
    public Signature {
        masks = Map.copyOf(masks);
        segments = segments == null ? null : List.copyOf(segments);
    }

    /** A mask's part of a signature: its shape as fed, and bool (non-zero = not allowed) or float (added). */
    public record MaskSig(Shape shape, boolean bool) {}
}
