package io.attn.parity;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.backend.Program;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.reference.Reference;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one {@link ParityCase} on a {@link Backend} and judges it against {@link Reference}.
 *
 * <p>The harness runs the program the backend compiles for the case's graph ({@link Backend#compile}, so a chain of
 * ops is checked through the backend's fusions) step by step, with buffers of its own:
 *
 * <ul>
 *   <li>the output buffer has {@link #GUARD} extra elements after {@code node.shape().size()}, all pre-filled with
 *       {@link #SENTINEL}; a guard element that changed is an out-of-bounds write, an output element still holding the
 *       sentinel is a missed write (it shows up as a huge error); a step that may run in place gets this distinct
 *       output all the same (kernels must accept one);
 *   <li>each input is handed over as a copy, which must be unchanged afterwards (a kernel must not write its inputs).
 * </ul>
 *
 * Values are then compared: where the reference (rounded to float) is NaN or +-Inf the backend must give exactly the
 * same kind; a non-finite value where the reference is finite fails; over the finite positions the relative error
 * {@code ||got - ref||_2 / ||ref||_2} (absolute when the reference is all zeros) must not exceed the case's bound.
 */
public final class ParityHarness {
    private ParityHarness() {}

    /** Guard elements after the output; more than one 512-bit vector of floats, so a whole-vector overrun shows. */
    public static final int GUARD = 37;

    /** Pre-fill of the output and its guard: a finite value no kernel here produces. */
    public static final float SENTINEL = -1.2345678e30f;

    /** The message of a result whose node the backend declared unsupported. */
    public static final String UNSUPPORTED = "not supported by backend";

    /**
     * Whether {@code backend} must run every case: the CPU backend is the complete one (an op it does not support is
     * a failure there); another backend may declare a node unsupported, which is reported as skipped.
     */
    public static boolean mustSupportEverything(Backend backend) {
        return backend.name().equals("cpu");
    }

    /** Runs every case in {@code cases} on {@code backend}. */
    public static List<ParityResult> runAll(List<ParityCase> cases, Backend backend) {
        List<ParityResult> r = new ArrayList<>();
        for (ParityCase c : cases) r.add(run(c, backend));
        return r;
    }

    /** Runs one case; never throws for a kernel failure (an exception becomes a failed result). */
    public static ParityResult run(ParityCase c, Backend backend) {
        Node node = c.node();
        String shape = node.shape().toString();
        for (Node n : c.graph().nodes())
            if (!n.isLeaf() && !backend.supports(n))
                return new ParityResult(c, shape, backend.name(), Double.NaN, Double.NaN, false, UNSUPPORTED);
        int size = node.shape().size();
        List<Buffer> owned = new ArrayList<>();
        try {
            List<Node> leaves = new ArrayList<>();
            for (Node n : c.graph().nodes()) if (n.isLeaf()) leaves.add(n);
            float[][] original = new float[leaves.size()][];
            Buffer[] ins = new Buffer[original.length];
            Buffer[] values = new Buffer[c.graph().nodes().size()];
            for (int i = 0; i < ins.length; i++) {
                original[i] = leafData(c, leaves.get(i));
                ins[i] = backend.hostView(original[i].clone());
                owned.add(ins[i]);
                values[leaves.get(i).id()] = ins[i];
            }
            Buffer out = backend.allocate(DType.F32, size + GUARD);
            owned.add(out);
            float[] got = new float[size + GUARD];
            Arrays.fill(got, SENTINEL);
            backend.upload(got, got.length, out);
            try {
                for (Program.Step step : backend.compile(c.graph()).steps()) {
                    Node o = step.output();
                    Buffer[] stepIns = new Buffer[step.inputs().size()];
                    for (int i = 0; i < stepIns.length; i++)
                        stepIns[i] = values[step.inputs().get(i).id()];
                    Buffer y = o == node
                            ? out
                            : backend.allocate(DType.F32, Math.max(1, o.shape().size()));
                    if (y != out) owned.add(y);
                    Buffer scratch = step.scratch() > 0 ? backend.allocate(DType.F32, step.scratch()) : null;
                    if (scratch != null) owned.add(scratch);
                    step.kernel().run(y, stepIns, scratch);
                    values[o.id()] = y;
                }
                backend.synchronize();
            } catch (RuntimeException | LinkageError e) {
                return fail(c, shape, backend, "execute threw " + e);
            }
            backend.download(out, got, got.length);
            for (int g = size; g < got.length; g++)
                if (Float.floatToRawIntBits(got[g]) != Float.floatToRawIntBits(SENTINEL))
                    return fail(
                            c,
                            shape,
                            backend,
                            "wrote past the end of the output: guard element " + (g - size) + " after " + size
                                    + " holds " + got[g]);
            for (int i = 0; i < ins.length; i++) {
                float[] back = new float[original[i].length];
                backend.download(ins[i], back, back.length);
                for (int j = 0; j < back.length; j++)
                    if (Float.floatToRawIntBits(back[j]) != Float.floatToRawIntBits(original[i][j]))
                        return fail(c, shape, backend, "modified input " + i + " at element " + j);
            }
            double[] ref = Reference.run(c.graph(), c.inputs()).get(0);
            return compare(c, shape, backend.name(), Arrays.copyOf(got, size), ref);
        } catch (RuntimeException e) {
            return fail(c, shape, backend, "harness error: " + e);
        } finally {
            for (Buffer b : owned) backend.release(b);
        }
    }

    /** Compares a backend's values with the reference's; public so tests can check the comparison itself. */
    public static ParityResult compare(ParityCase c, String shape, String backend, float[] got, double[] ref) {
        if (got.length != ref.length)
            return new ParityResult(
                    c, shape, backend, Double.NaN, Double.NaN, false, got.length + " values, expected " + ref.length);
        Shape s = c.node().shape();
        double diff2 = 0, ref2 = 0, maxAbs = 0;
        int worst = -1;
        for (int i = 0; i < ref.length; i++) {
            float r = (float) ref[i];
            float a = got[i];
            if (!Float.isFinite(r) || !Float.isFinite(a)) {
                boolean same = Float.isNaN(r) ? Float.isNaN(a) : r == a;
                if (!same)
                    return new ParityResult(
                            c,
                            shape,
                            backend,
                            Double.NaN,
                            Double.NaN,
                            false,
                            "non-finite mismatch at " + at(s, i) + ": got " + a + ", reference " + ref[i]);
                continue;
            }
            double d = a - ref[i];
            diff2 += d * d;
            ref2 += ref[i] * ref[i];
            if (Math.abs(d) > maxAbs || worst < 0) {
                maxAbs = Math.max(maxAbs, Math.abs(d));
                worst = i;
            }
        }
        double den = ref2 > 0 ? Math.sqrt(ref2) : 1.0;
        double rel = Math.sqrt(diff2) / den;
        boolean pass = rel <= c.bound();
        String msg = pass
                ? "ok"
                : "relative error " + fmt(rel) + " > bound " + fmt(c.bound()) + " (" + c.boundReason() + "); worst at "
                        + at(s, worst) + ": got " + got[worst] + ", reference " + ref[worst];
        return new ParityResult(c, shape, backend, maxAbs, rel, pass, msg);
    }

    private static ParityResult fail(ParityCase c, String shape, Backend b, String msg) {
        return new ParityResult(c, shape, b.name(), Double.NaN, Double.NaN, false, msg);
    }

    /** The float data of a leaf: a per-call input or a constant. */
    static float[] leafData(ParityCase c, Node leaf) {
        return switch (leaf.op()) {
            case INPUT -> {
                Tensor t = c.inputs().get(leaf.params(OpParams.Input.class).name());
                if (t == null) throw new IllegalArgumentException("case " + c.name() + " lacks input " + leaf);
                yield t.data();
            }
            case CONSTANT -> leaf.params(OpParams.Constant.class).value().data();
            default -> throw new IllegalArgumentException("case " + c.name() + ": input " + leaf + " is not a leaf");
        };
    }

    /** Multi-index of flat position {@code i} in {@code s}, e.g. {@code [1, 0, 3]}. */
    static String at(Shape s, int i) {
        if (i < 0) return "-";
        int[] idx = new int[s.rank()];
        for (int d = s.rank() - 1; d >= 0; d--) {
            int n = Math.max(1, s.dim(d));
            idx[d] = i % n;
            i /= n;
        }
        return Arrays.toString(idx);
    }

    static String fmt(double v) {
        return Double.isNaN(v) ? "-" : String.format(java.util.Locale.ROOT, "%.3e", v);
    }
}
