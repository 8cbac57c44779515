package io.attn.cuda.ops;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.KernelArgs;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Shape;

/**
 * The mask arguments that softmax_f32, attention_f32 and the flash kernels share, taken from a node's inputs: the attn
 * mask with its batch / head element strides (0 for a broadcast dim), the key-padding mask, and each one's kind (0
 * none, 1 BOOL, 2 ADDITIVE, 3 RELATIVE: {@code common.cuh}; a relative bias {@code (H|1, L + S - 1)} has batch stride
 * 0 and head stride {@code L + S - 1}, or 0 when broadcast).
 */
record Masks(CudaBuffer mask, int maskKind, int strideB, int strideH, CudaBuffer kpm, int kpmKind, int winL, int winR) {
    /**
     * Appends the kernels' mask parameters, in their order: mask, kind, strides, key padding, its kind, the sliding
     * window's sides ({@link MaskSpec#left}, {@link MaskSpec#right}: 2^30 - 1 for an open side).
     */
    KernelArgs appendTo(KernelArgs a) {
        return a.ptr(mask)
                .i32(maskKind)
                .i32(strideB)
                .i32(strideH)
                .ptr(kpm)
                .i32(kpmKind)
                .i32(winL)
                .i32(winR);
    }

    /** The masks of {@code spec} for scores (.., l, s): node inputs from {@code first} on, attn mask first. */
    static Masks of(MaskSpec spec, Node node, CudaBuffer[] in, int first, int l, int s) {
        CudaBuffer mask = null, kpm = null;
        int strideB = 0, strideH = 0, i = first;
        if (spec.attnMask() != MaskKind.NONE) {
            Shape ms = node.input(i).shape();
            mask = in[i];
            if (spec.relativeBias()) strideH = ms.dim(0) == 1 ? 0 : l + s - 1; // (H|1, L + S - 1)
            else if (ms.rank() == 4) {
                strideB = ms.dim(0) == 1 ? 0 : ms.dim(1) * l * s;
                strideH = ms.dim(1) == 1 ? 0 : l * s;
            }
            i++;
        }
        if (spec.keyPadding() != MaskKind.NONE) kpm = in[i];
        return new Masks(
                mask, kind(spec.attnMask()), strideB, strideH, kpm, kind(spec.keyPadding()), spec.left(), spec.right());
    }

    private static int kind(MaskKind k) {
        return switch (k) {
            case NONE -> 0;
            case BOOL -> 1;
            case ADDITIVE -> 2;
            case RELATIVE -> 3;
        };
    }
}
