/**
 * Text models on the attn engine: Hugging Face BERT-family checkpoints (a {@code save_pretrained} or hub snapshot
 * folder) and ONNX exports of them, tokenized by the Hugging Face tokenizers library (through DJL), pooled as
 * sentence-transformers pools. {@link io.attn.text.Embedder} is the entry point.
 *
 * <p>This module is a client of the engine's public API ({@code io.attn.engine}, {@code io.attn.tensor}, {@code
 * io.attn.AttnException}) and of nothing else in it; the tokenizer's native library stays out of {@code engine-core}.
 */
package io.attn.text;
