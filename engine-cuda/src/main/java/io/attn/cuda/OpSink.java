package io.attn.cuda;

import io.attn.tensor.DType;

/**
 * Everything {@link CudaBackend} does to a device: memory, copies, kernel launches, the embedding error word. {@link
 * DriverSink} does it with the driver API on the backend's stream. Tests substitute a recorder (launch arguments
 * checked against the PTX, no device) or an emulator (the kernels compiled for the host), so the backend's op logic
 * runs without a GPU. Called with the stream's lock held ({@link RawStream#lock}).
 */
interface OpSink extends Launcher {
    /** A buffer of at least {@code elements} elements. */
    CudaBuffer allocate(DType dtype, long elements);

    /** Copies {@code src[0..count)} into {@code dst} and waits for it. */
    void upload(float[] src, int count, CudaBuffer dst);

    /** Copies the 16-bit values {@code src} into {@code dst} (a BF16 or F16 buffer of at least that many) and waits. */
    void upload16(short[] src, CudaBuffer dst);

    /** Copies the int8 values {@code src} into {@code dst} (an I8 buffer of at least that many) and waits. */
    void upload8(byte[] src, CudaBuffer dst);

    /** Waits for queued work, then copies {@code count} floats of {@code src} into {@code dst}. */
    void download(CudaBuffer src, float[] dst, int count, String after);

    /** Waits for queued work; {@code after} names it for error messages. */
    void sync(String after);

    /** Fills the first {@code n} floats of {@code p} with zeros. */
    void zero(DevPtr p, long n);

    /** The device address of the 4-byte error word that embedding_f32 writes. */
    long errorWord();

    /** Waits for the queued work, reads the error word and clears it; 0 when no error was recorded. */
    int takeError(String after);
}
