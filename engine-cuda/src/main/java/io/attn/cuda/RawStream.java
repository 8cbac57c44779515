package io.attn.cuda;

import jcuda.driver.CUstream;

/** A JCuda stream handle that also gives its raw {@code CUstream} value (for cuBLAS bound through FFM). */
final class RawStream extends CUstream {
    RawStream() {}

    long address() {
        return getNativePointer();
    }
}
