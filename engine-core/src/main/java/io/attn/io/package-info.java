/**
 * Readers and writers for the files users bring: {@link io.attn.io.Npy}, {@link io.attn.io.Npz},
 * {@link io.attn.io.SafeTensors}, {@link io.attn.io.WordVectors} and {@link io.attn.io.Json} (with {@link
 * io.attn.io.JsonFields}, typed fields of a parsed object), plus {@link io.attn.io.AtomicFiles} for crash-safe output.
 *
 * <p>All readers treat their input as hostile: every size a header declares is checked against the bytes that are
 * actually there before anything is allocated, and every failure is an {@link io.attn.AttnException} (code
 * {@code BAD_INPUT}) whose one-line message names the file and the problem.
 */
package io.attn.io;
