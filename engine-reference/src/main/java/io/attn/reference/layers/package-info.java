/**
 * An independent, plain double-precision reference for PyTorch's attention modules, used to judge the engine's layers.
 *
 * <ul>
 *   <li>{@link io.attn.reference.layers.RefAttention}: {@code F.scaled_dot_product_attention},
 *       {@code nn.MultiheadAttention}.
 *   <li>{@link io.attn.reference.layers.RefTransformer}: encoder/decoder layers, stacks and {@code nn.Transformer}.
 *   <li>{@link io.attn.reference.layers.RefMath}: erf, exact GELU, Linear, LayerNorm, cosine similarity.
 *   <li>{@link io.attn.reference.layers.RefEmbedding}: {@code nn.Embedding}, sinusoidal positional encoding.
 *   <li>{@link io.attn.reference.layers.RandomStateDicts}: seeded state dicts with PyTorch names and shapes.
 * </ul>
 *
 * Inputs are the engine's float32 {@code Tensor}s (widened exactly to double), state dicts are
 * {@code Map<String, Tensor>} with PyTorch {@code state_dict()} names under a prefix, and results are
 * {@link io.attn.reference.layers.DTensor}s. Everything is eval mode ({@code batch_first=True}, no dropout). Masks:
 * boolean = non-zero masks out, float = added; a fully masked query row gives zero weights and a zero attention output
 * (PyTorch gives NaN). This package deliberately shares no code with the engine's own layer implementations.
 */
package io.attn.reference.layers;
