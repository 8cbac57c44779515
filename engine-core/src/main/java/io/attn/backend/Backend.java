package io.attn.backend;

import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.tensor.DType;

/**
 * A device that computes graphs. {@link #compile} turns a graph into the backend's {@link Program} (its fusions);
 * {@link #execute} computes one node, with one exhaustive {@code switch (node.op())}; {@link #supports} declares what
 * it cannot do (never by throwing from execute).
 *
 * <p>A backend instance is thread-safe: the executor calls it from many request threads at once, each with its own
 * buffers. {@link #close} releases everything it owns; it is called once, after all calls have finished.
 */
public interface Backend extends AutoCloseable {
    /** Short name: {@code cpu}, {@code cuda}. */
    String name();

    /** One line for users: device, threads, libraries in use. */
    String description();

    /** Whether this backend can compute {@code node} (its op, params and shapes). */
    boolean supports(Node node);

    /** A new buffer of at least {@code elements} elements. */
    Buffer allocate(DType dtype, long elements);

    /**
     * Returns a buffer to the backend (a pool may keep it). Optional: the default lets the GC take it. The executor also
     * releases {@link #hostView} buffers: a backend whose host views wrap the caller's array must never pool those.
     */
    default void release(Buffer buffer) {}

    /** Copies {@code src[0..count)} into {@code dst}. */
    void upload(float[] src, int count, Buffer dst);

    /** Copies the first {@code count} elements of {@code src} into {@code dst}. */
    void download(Buffer src, float[] dst, int count);

    /**
     * A buffer whose contents are {@code dst}'s own memory, so that a kernel writing a graph output into it writes the
     * caller's array (zero-copy output), or null when this backend's kernels cannot write host memory (the output is
     * then computed in device memory and downloaded). Default null; the CPU wraps the array.
     */
    default Buffer outputView(float[] dst) {
        return null;
    }

    /**
     * A buffer that holds {@code data}. Optional: the CPU wraps the array itself (no copy); devices allocate and
     * upload.
     */
    default Buffer hostView(float[] data) {
        Buffer b = allocate(DType.F32, data.length);
        upload(data, data.length, b);
        return b;
    }

    /**
     * The buffer of a graph constant (a weight) holding {@code data}, made once per array by the executors' shared
     * {@code Resources} after {@link #compile}. A backend may keep it in another format for the steps of its programs
     * that read it (the CUDA backend at precision bf16 / fp16: GEMM weights in 16 bits); its steps then get that
     * buffer. Default: {@link #hostView}.
     */
    default Buffer constant(float[] data) {
        return hostView(data);
    }

    /**
     * Bytes of backend memory the buffers made by {@link #constant} hold now (the weights on a device), or -1 where
     * they are views of the models' own arrays (the CPU). Default -1.
     */
    default long constantBytes() {
        return -1;
    }

    /** Computes {@code node} from {@code inputs} (in the node's input order) into {@code out}. */
    void execute(Node node, Buffer out, Buffer[] inputs);

    /**
     * How this backend computes {@code graph}: its steps, where a backend fuses what it has kernels for (its fusion
     * rules live next to those kernels). Every step's kernel must compute bitwise what the nodes it covers would give
     * one by one, or stay within the parity bound of the op. The default fuses nothing: one {@link #execute} per node.
     */
    default Program compile(Graph graph) {
        return Program.unfused(graph, this);
    }

    /** Waits until every queued operation of the calling thread's work is done. Optional. */
    default void synchronize() {}

    /**
     * A timer of the device work this backend queues (CUDA events on its stream), or null where the backend has none
     * (the CPU: its work is done when a call returns, and the wall clock times it). The caller closes it.
     */
    default DeviceTimer deviceTimer() {
        return null;
    }

    @Override
    void close();
}
