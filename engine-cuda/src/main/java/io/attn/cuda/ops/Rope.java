package io.attn.cuda.ops;

import static io.attn.cuda.CudaStream.args;

import io.attn.cuda.CudaBuffer;
import io.attn.cuda.CudaStream;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;

/**
 * ROPE ({@code rope.cu}): the rotate-half rotation of the first rotary dims of x {@code (B, H, L, D)}, the rest copied.
 * Runtime positions (a start, or per-row ids) are read on the device; a bad one makes its token's rotated dims NaN.
 * The frequencies' scaling ({@link OpParams.Rope.Scaling}) travels as scalars; the kernel applies it as the Java one.
 * NTK travels as what it computes: the frequencies of base {@code theta * factor} divided by {@code factor^(2/R)}, the
 * kernel's linear kind with those two float32 values ({@link OpParams.Rope.Scaling#base}, {@link
 * OpParams.Rope.Scaling#divisor}), the same operations as {@link OpParams.Rope#invFreq}.
 */
public final class Rope {
    private Rope() {}

    public static void run(CudaStream st, Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.Rope.class);
        Shape s = node.shape();
        int b = s.dim(0), h = s.dim(1), l = s.dim(2), d = s.dim(3), r = p.rotaryDim();
        long pairs = (long) b * l * (r / 2), copies = (long) b * h * l * (d - r);
        OpParams.Rope.Scaling sc = p.scaling();
        boolean llama3 = sc.kind() == OpParams.Rope.Scaling.Kind.LLAMA3;
        int mode =
                switch (p.positions()) {
                    case RANGE -> 0;
                    case START -> 1;
                    case IDS -> 2;
                };
        st.elementwise(
                Kernel.ROPE_F32,
                Math.max(pairs, copies),
                args(x[0], y, p.positions() == OpParams.Rope.Positions.RANGE ? null : x[1])
                        .i32(b)
                        .i32(h)
                        .i32(l)
                        .i32(d)
                        .i32(r)
                        .f32(sc.base(p.theta()))
                        .i32(p.offset())
                        .i32(mode)
                        .i32(
                                switch (sc.kind()) {
                                    case NONE -> 0;
                                    case LINEAR, NTK -> 1;
                                    case LLAMA3 -> 2;
                                })
                        .f32(sc.kind() == OpParams.Rope.Scaling.Kind.NTK ? sc.divisor(r) : (float) sc.factor())
                        .f32(llama3 ? (float) (sc.originalMaxPositions() / sc.lowFreqFactor()) : 0f)
                        .f32(llama3 ? (float) (sc.originalMaxPositions() / sc.highFreqFactor()) : 0f)
                        .f32((float) sc.originalMaxPositions())
                        .f32((float) sc.lowFreqFactor())
                        .f32((float) (sc.highFreqFactor() - sc.lowFreqFactor())));
    }
}
