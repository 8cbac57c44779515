/**
 * The library API for services: {@link io.attn.engine.Engine} (a device, opened with {@link
 * io.attn.engine.EngineOptions}), {@link io.attn.engine.AttnModel} (a loaded model: {@code encode}, {@code
 * selfAttention}, {@code crossAttention}, general {@code run(Request)}), {@link io.attn.engine.Request}, {@link
 * io.attn.engine.Result}, {@link io.attn.engine.Tensors} (tensors from {@code float[]}, {@code FloatBuffer}, {@code
 * MemorySegment}).
 *
 * <p>Engines and models are thread-safe and {@link java.lang.AutoCloseable}: close waits for the calls in flight, is
 * idempotent, and any use after it throws {@link java.lang.IllegalStateException}. Every other failure is an {@link
 * io.attn.AttnException} with a {@link io.attn.AttnException.Code}.
 */
package io.attn.engine;
