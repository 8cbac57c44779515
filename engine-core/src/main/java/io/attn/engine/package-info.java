/**
 * The library API for services: {@link io.attn.engine.Engine} (a device, opened with {@link
 * io.attn.engine.EngineOptions}), {@link io.attn.engine.AttnModel} (a loaded model: {@code encode}, {@code
 * selfAttention}, {@code crossAttention}, general {@code run(Request)}), {@link io.attn.engine.Request}, {@link
 * io.attn.engine.Result}, {@link io.attn.engine.Tensors} (tensors from {@code float[]}, {@code FloatBuffer}, {@code
 * MemorySegment}); for text generation with a decoder-only language model, {@link io.attn.engine.LanguageModel}
 * ({@code generate}) with {@link io.attn.engine.GenerationOptions}, {@link io.attn.engine.Generation}, {@link
 * io.attn.engine.TokenListener} and the word-level {@link io.attn.engine.WordTokenizer}.
 *
 * <p>Engines and models are thread-safe and {@link java.lang.AutoCloseable}: close waits for the calls in flight, is
 * idempotent, and any use after it throws {@link java.lang.IllegalStateException}. Every other failure is an {@link
 * io.attn.AttnException} with a {@link io.attn.AttnException.Code}.
 */
package io.attn.engine;
