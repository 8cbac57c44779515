package io.attn.cuda;

import io.attn.kernels.Kernel;
import io.attn.tensor.DType;

/**
 * The backend's stream as the op classes ({@code io.attn.cuda.ops}) see it: kernel launches, GEMMs, scratch device
 * memory and the embedding error word, all queued in stream order. Every method is called with the stream's lock held
 * ({@link RawStream#lock}): {@link CudaBackend} takes it once around each op, so the kernels of one op (and its
 * scratch buffers) need no lock of their own.
 */
public final class CudaStream {
    /** Threads per block of the 1-D grid-stride kernels, and the most blocks such a launch uses. */
    public static final int THREADS = 256, MAX_BLOCKS = 65535;

    private final OpSink sink;
    private final Blas blas;
    private final CudnnAttention cudnn;
    final DeviceArrays arrays; // the int8 ops' weights, uploaded on first use

    CudaStream(OpSink sink, Blas blas) {
        this(sink, blas, null);
    }

    CudaStream(OpSink sink, Blas blas, CudnnAttention cudnn) {
        this.sink = sink;
        this.blas = blas;
        this.cudnn = cudnn;
        this.arrays = new DeviceArrays(sink);
    }

    /**
     * The device copy of an op's int8 parameter array (a {@code QMATMUL} weight or zero points, a {@code QEMBEDDING}
     * table), uploaded once and kept while the array is reachable ({@link DeviceArrays}).
     */
    public CudaBuffer deviceInt8(byte[] data) {
        return arrays.int8(data);
    }

    /** The device copy of an op's float parameter array (a {@code QMATMUL}'s weight scales), as {@link #deviceInt8}. */
    public CudaBuffer deviceF32(float[] data) {
        return arrays.f32(data);
    }

    /** cuDNN's fused attention ({@code attention=cudnn}), or null when that path is not open on this backend. */
    public CudnnAttention cudnn() {
        return cudnn;
    }

    /** A kernel argument list that starts with the device addresses of {@code bufs} (null: address 0). */
    public static KernelArgs args(CudaBuffer... bufs) {
        KernelArgs a = new KernelArgs();
        for (CudaBuffer b : bufs) a.ptr(b);
        return a;
    }

    /** Threads per block for a kernel that gives one block to a row of {@code cols}: a warp multiple, at most 256. */
    public static int rowThreads(int cols) {
        return cols >= THREADS ? THREADS : Math.max(32, (cols + 31) / 32 * 32);
    }

    /** Launches {@code kernel} on a grid of {@code gx x gy x gz} blocks of {@code threads}. */
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, KernelArgs a) {
        sink.launch(kernel, gx, gy, gz, threads, a);
    }

    /** The same with {@code smemBytes} of dynamic shared memory per block (above 48 KiB the limit is raised). */
    public void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs a) {
        sink.launch(kernel, gx, gy, gz, threads, smemBytes, a);
    }

    /** A 1-D grid-stride launch over {@code n} elements (none when n is 0). */
    public void elementwise(Kernel kernel, long n, KernelArgs a) {
        if (n == 0) return;
        int blocks = (int) Math.min((n + THREADS - 1) / THREADS, MAX_BLOCKS);
        launch(kernel, blocks, 1, 1, THREADS, a);
    }

    /** One block per row: {@code rows} blocks of {@link #rowThreads}({@code cols}). */
    public void rows(Kernel kernel, int rows, int cols, KernelArgs a) {
        launch(kernel, rows, 1, 1, rowThreads(cols), a);
    }

    /**
     * Row-major strided batched GEMM into c (beta 0; {@link Blas} has the conventions, ldc = n, strideC = m * n); k ==
     * 0 gives zeros.
     */
    public void gemm(
            boolean ta,
            boolean tb,
            int m,
            int n,
            int k,
            float alpha,
            CudaBuffer a,
            int lda,
            long strideA,
            CudaBuffer b,
            int ldb,
            long strideB,
            CudaBuffer c,
            int batch) {
        if (a.dtype() != DType.F32 || b.dtype() != DType.F32)
            throw new IllegalStateException("fp32 GEMM given " + a.dtype() + " A and " + b.dtype() + " B");
        if ((long) m * n * batch == 0) return;
        if (k == 0) {
            sink.zero(c.ptr(), (long) m * n * batch);
            return;
        }
        blas.sgemm(
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a.ptr(),
                lda,
                strideA,
                b.ptr(),
                ldb,
                strideB,
                0f,
                c.ptr(),
                n,
                (long) m * n,
                batch);
    }

    /** Whether {@link #gemm16} runs on this stream's GEMM library ({@link Blas#halfInputs}). */
    public boolean halfGemm() {
        return blas.halfInputs();
    }

    /**
     * {@link #gemm} with 16-bit A and B ({@code f16}: IEEE half, else bfloat16), fp32 C, fp32 accumulation ({@link
     * Blas#gemm16}); only where {@link #halfGemm}.
     */
    public void gemm16(
            boolean f16,
            boolean ta,
            boolean tb,
            int m,
            int n,
            int k,
            float alpha,
            CudaBuffer a,
            int lda,
            long strideA,
            CudaBuffer b,
            int ldb,
            long strideB,
            CudaBuffer c,
            int batch) {
        if ((long) m * n * batch == 0) return;
        if (k == 0) {
            sink.zero(c.ptr(), (long) m * n * batch);
            return;
        }
        blas.gemm16(
                f16,
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a.ptr(),
                lda,
                strideA,
                b.ptr(),
                ldb,
                strideB,
                0f,
                c.ptr(),
                n,
                (long) m * n,
                batch);
    }

    /** A scratch buffer of {@code elements} values of {@code dtype} from the pool (see {@link #scratch(long)}). */
    public CudaBuffer scratch(DType dtype, long elements) {
        return sink.allocate(dtype, elements);
    }

    /**
     * A scratch buffer of {@code elements} floats from the pool; close it when the op has queued its last use (later
     * users of the block are queued after it on the same stream).
     */
    public CudaBuffer scratch(long elements) {
        return sink.allocate(DType.F32, elements);
    }

    /** Fills the first {@code n} floats of {@code b} with zeros. */
    public void zero(CudaBuffer b, long n) {
        sink.zero(b.ptr(), n);
    }

    /** The device address of the 4-byte error word that embedding_f32 writes. */
    public long errorWord() {
        return sink.errorWord();
    }

    /** Waits for the queued work, reads the error word and clears it; 0 when no error was recorded. */
    public int takeError(String after) {
        return sink.takeError(after);
    }
}
