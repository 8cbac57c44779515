package io.attn.cuda;

/**
 * The native side of running ops in {@link CudaBackend}: kernel launches, zero fills, scratch memory and the
 * embedding error word. The backend's own implementation queues work on its stream; tests substitute a recorder
 * that checks every launch against the PTX signatures without a GPU.
 */
interface OpSink {
    /** Launches {@code entry} of kernel file {@code file} with a 1-D block of {@code threads}. */
    void launch(String file, String entry, int gx, int gy, int gz, int threads, KernelArgs args);

    /** Fills the first {@code n} floats of {@code p} with zeros. */
    void zero(DevPtr p, long n);

    /** Device scratch of {@code elements} floats, returned to the pool by {@code close()}. */
    CudaBuffer scratch(long elements);

    /** The device address of the 4-byte error word that embedding_f32 writes. */
    long errorWord();

    /** Waits for the queued work, reads the error word and clears it; 0 when no error was recorded. */
    int takeError(String after);
}
