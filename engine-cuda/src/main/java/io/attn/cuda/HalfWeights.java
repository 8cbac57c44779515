package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.Program;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.io.Bf16;
import io.attn.io.Half;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Which weights the CUDA backend keeps in 16 bits on the device at precision bf16 / fp16: the constants whose every
 * reader, in every program the backend compiled, is a GEMM step that takes it as its B operand (a {@code Linear}'s
 * weight, plain or with its fused bias and activation). They are rounded once on the host (round to nearest, ties to
 * even: torch's {@code .to(torch.bfloat16 / torch.float16)}) and uploaded as 16-bit values only, so no fp32 copy of
 * them is on the device; their GEMMs run with 16-bit A and B ({@link Blas#gemm16}, the activation converted by {@code
 * f32_to_bf16 / f32_to_f16}). A constant with another reader stays fp32 (a table both gathered by EMBEDDING and
 * multiplied by a tied LM head; layer-norm weights, biases, position tables), and its GEMMs keep the fp32 path.
 *
 * <p>Arrays are keyed by identity (as {@code Resources} keys the uploads) and held weakly. A program compiled after
 * a weight was uploaded in 16 bits that reads it in fp32 is refused ({@link IllegalStateException}): the graphs of one
 * model differ only in shapes, so this does not happen.
 */
final class HalfWeights {
    private final DType type; // BF16 or F16
    private final Map<float[], Named> gemmOnly = new WeakHashMap<>(); // arrays only GEMM B operands read, so far
    private final Set<float[]> fp32 = Collections.newSetFromMap(new WeakHashMap<>()); // arrays some step reads fp32
    private final Set<float[]> uploaded = Collections.newSetFromMap(new WeakHashMap<>()); // made 16-bit already

    /** A constant's name and shape (not its tensor: the map's value must not hold the array that is its key). */
    private record Named(String name, Shape shape) {}

    HalfWeights(DType type) {
        if (type != DType.BF16 && type != DType.F16) throw new IllegalArgumentException("16-bit weights: " + type);
        this.type = type;
    }

    DType type() {
        return type;
    }

    /** Notes the constants of {@code program}: which are read only as GEMM B operands, which in fp32. */
    synchronized void register(Program program) {
        Map<float[], Node> ok = new IdentityHashMap<>();
        Set<float[]> bad = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Node o : program.graph().outputs()) if (o.op() == Op.CONSTANT) bad.add(data(o));
        for (Program.Step s : program.steps())
            for (int i = 0; i < s.inputs().size(); i++) {
                Node in = s.inputs().get(i);
                if (in.op() != Op.CONSTANT) continue;
                if (gemmWeight(s, i)) ok.put(data(in), in);
                else bad.add(data(in));
            }
        for (float[] d : bad) {
            if (uploaded.contains(d)) {
                Named n = gemmOnly.get(d);
                throw new IllegalStateException("weight '" + (n == null ? "?" : n.name())
                        + "' is held in 16 bits for the GEMMs of an earlier graph and read in fp32 by this one");
            }
            gemmOnly.remove(d);
            fp32.add(d);
        }
        for (var e : ok.entrySet())
            if (!bad.contains(e.getKey()) && !fp32.contains(e.getKey())) {
                var p = e.getValue().params(OpParams.Constant.class);
                gemmOnly.put(e.getKey(), new Named(p.name(), p.value().shape()));
            }
    }

    /** Whether input {@code i} of step {@code s} is the B operand of a GEMM that {@link Blas#gemm16} can run. */
    static boolean gemmWeight(Program.Step s, int i) {
        Node mm = s.covers().getFirst();
        if (mm.op() != Op.MATMUL || i != 1 || s.name().equals("MATMUL+SOFTMAX")) return false;
        // the step's inputs start with the product's own (a single MATMUL, or the epilogue fusion: A, B, bias)
        return s.inputs().size() >= 2
                && s.inputs().get(0) == mm.input(0)
                && s.inputs().get(1) == mm.input(1)
                && mm.input(0) != mm.input(1);
    }

    /**
     * {@code data} rounded to 16 bits when it is a weight kept in 16 bits ({@link #register}), else null. Fails with
     * one line naming the weight when a finite value is beyond float16's range.
     */
    synchronized short[] narrow(float[] data) {
        Named n = gemmOnly.get(data);
        if (n == null) return null;
        short[] out = round(data, type, n.name(), n.shape());
        uploaded.add(data);
        return out;
    }

    /** {@code data} rounded to {@code type} (BF16 / F16); BAD_INPUT naming {@code name} for a finite value beyond it. */
    static short[] round(float[] data, DType type, String name, Shape shape) {
        short[] out = new short[data.length];
        boolean f16 = type == DType.F16;
        for (int i = 0; i < data.length; i++) {
            float v = data[i];
            short h = f16 ? Half.fromFloat(v) : Bf16.fromFloat(v);
            if (Float.isFinite(v) && Float.isInfinite(f16 ? Half.toFloat(h) : Bf16.toFloat(h)))
                throw AttnException.badInput("cuda precision " + (f16 ? "fp16" : "bf16") + ": weight '" + name
                        + "' holds " + v + " at " + Tensor.of(shape, data).indexString(i) + ", beyond "
                        + (f16 ? "float16" : "bfloat16") + "'s range (largest finite "
                        + (f16 ? "65504" : "3.3895314e38") + ")" + (f16 ? "; use precision bf16 or fp32" : ""));
            out[i] = h;
        }
        return out;
    }

    private static float[] data(Node constant) {
        return constant.params(OpParams.Constant.class).value().data();
    }
}
