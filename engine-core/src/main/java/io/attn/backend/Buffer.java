package io.attn.backend;

import io.attn.tensor.DType;

/**
 * Memory owned by a backend (host arrays for the CPU, device memory for CUDA). A buffer may be larger than the node it
 * currently holds: the executor reuses buffers across nodes, so kernels size their work by the node's shape, never by
 * the buffer's capacity.
 */
public interface Buffer {
    DType dtype();

    /** Capacity in elements. */
    long capacity();
}
