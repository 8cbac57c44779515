package io.attn.exec;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.backend.Program;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleConsumer;

/**
 * Runs one {@link Graph} on one {@link Backend}: the backend compiles the graph into its {@link Program} (where it
 * fuses what it has kernels for), and the executor runs the program's steps. Constants are uploaded once, when the
 * executor is made (or once per model, when its executors share {@link Resources}). Intermediate values and the
 * steps' scratch memory live in backend buffers planned by {@link BufferPlan}; the set of buffers for one run (an
 * arena) is pooled and reused, so steady-state calls allocate only their outputs. Values stay on the backend from the
 * inputs' upload to the outputs' download.
 *
 * <p>A step with an in-place input ({@link Op#inPlaceInput()}: a {@link Op#CACHE_WRITE}) writes its output into that
 * input's buffer. Such an input may be bound
 * to a backend {@link Buffer} the caller owns ({@link #run(Map, Map)}), so that state such as a key/value cache stays
 * on the backend across calls; given as a host tensor instead, it is copied to a fresh buffer first (the caller's
 * tensor is never modified).
 *
 * <p>Thread-safe: concurrent {@link #run} calls each take their own arena from the pool (concurrent calls must not
 * share a bound buffer that a cache write modifies).
 */
public final class Executor implements AutoCloseable {
    private final Graph graph;
    private final Backend backend;
    private final Program program;
    private final BufferPlan plan;
    private final Buffer[] constants; // by node id; null for non-constants
    private final boolean[] mutated; // by node id: inputs that a step writes in place
    private final Resources resources;
    private final boolean ownsResources;
    private volatile boolean closed;
    private volatile double[] workDone; // by step, made on the first run that reports progress

    /** An executor with resources of its own, released when it is closed. */
    public Executor(Backend backend, Graph graph) {
        this(graph, new Resources(backend), true);
    }

    /**
     * An executor of a given program for {@code backend} (resources of its own): for comparing a backend's fused
     * program with {@link Program#unfused}, or running a program a test built by hand.
     */
    public Executor(Backend backend, Program program) {
        this(program.graph(), new Resources(backend), true, program);
    }

    /**
     * An executor whose weights and working memory come from {@code shared} (see {@link Resources}): the executors of
     * one model built for many input shapes upload each weight once and share their arenas. Closing this executor does
     * not release them; the owner of {@code shared} does.
     */
    public Executor(Graph graph, Resources shared) {
        this(graph, shared, false);
    }

    private Executor(Graph graph, Resources resources, boolean owns) {
        this(graph, resources, owns, null);
    }

    private Executor(Graph graph, Resources resources, boolean owns, Program given) {
        Backend backend = resources.backend();
        this.graph = graph;
        this.backend = backend;
        this.resources = resources;
        this.ownsResources = owns;
        for (Node n : graph.nodes())
            if (!n.isLeaf() && !backend.supports(n))
                throw new AttnException(
                        AttnException.Code.DEVICE_UNAVAILABLE,
                        "backend " + backend.name() + " does not support " + n + " " + n.params());
        this.program = given != null ? given : backend.compile(graph);
        if (program.graph() != graph) throw new IllegalStateException(backend.name() + " compiled another graph");
        this.mutated = new boolean[graph.nodes().size()];
        for (Program.Step st : program.steps())
            if (st.inPlace() >= 0) mutated[st.inputs().get(st.inPlace()).id()] = true;
        this.plan = new BufferPlan(program);
        this.constants = new Buffer[graph.nodes().size()];
        try {
            for (Node n : graph.nodes())
                if (n.op() == Op.CONSTANT)
                    constants[n.id()] = resources.constant(
                            n.params(OpParams.Constant.class).value().data());
        } catch (RuntimeException | Error e) { // out of device memory part-way: give back what was uploaded
            if (owns) resources.close();
            throw e;
        }
    }

    public Graph graph() {
        return graph;
    }

    public BufferPlan plan() {
        return plan;
    }

    /** The backend's program for this graph: its steps and fusions. */
    public Program program() {
        return program;
    }

    /** Runs the graph; {@code inputs} maps each graph input name to a tensor of the declared shape. */
    public List<Tensor> run(Map<String, Tensor> inputs) {
        return run(inputs, Map.of());
    }

    /**
     * Runs the graph, telling {@code progress} (when not null) after each op the fraction of the graph's estimated
     * work done so far: each op weighs its floating-point operations (a GEMM {@code 2MNK}, attention {@code 4LSD} per
     * head), or its output's size for the memory-bound ops. The last call, once the outputs are on the host, says 1.
     */
    public List<Tensor> run(Map<String, Tensor> inputs, DoubleConsumer progress) {
        return run(inputs, Map.of(), null, progress);
    }

    /**
     * Runs the graph with some inputs bound to backend buffers ({@code bound}, by input name; at least the input's size,
     * owned by the caller and left allocated) and the others given as host tensors ({@code inputs}). A bound input read
     * by a {@link Op#CACHE_WRITE} (written in place) holds the written cache after the call.
     */
    public List<Tensor> run(Map<String, Tensor> inputs, Map<String, Buffer> bound) {
        return run(inputs, bound, null, null);
    }

    /**
     * Runs the graph and writes its outputs into the caller's arrays, one per graph output in order, each exactly the
     * output's size, as NumPy's {@code out=} does: a steady-state call then allocates nothing, and a large output
     * costs no zeroing (1-2 ms for a fresh 67 MB array, on the calling thread whatever the thread count). On
     * the CPU the ops compute straight into the arrays; other backends download into them. The returned tensors wrap
     * those arrays. An output array must not be an input's (an op would overwrite what it still reads), and calls
     * running at the same time need arrays of their own.
     */
    public List<Tensor> runInto(Map<String, Tensor> inputs, float[]... outputs) {
        List<Node> outs = graph.outputs();
        if (outputs.length != outs.size())
            throw AttnException.badInput(
                    "runInto: " + outputs.length + " output arrays for " + outs.size() + " graph outputs");
        for (int i = 0; i < outputs.length; i++) {
            long want = outs.get(i).shape().size();
            if (outputs[i] == null || outputs[i].length != want)
                throw AttnException.shape("runInto: output " + i + " needs an array of " + want + " floats ("
                        + outs.get(i).shape() + "), got " + (outputs[i] == null ? "null" : outputs[i].length));
            for (int j = 0; j < i; j++)
                if (outputs[j] == outputs[i])
                    throw AttnException.badInput("runInto: outputs " + j + " and " + i + " share one array");
            for (var e : inputs.entrySet())
                if (e.getValue().data() == outputs[i])
                    throw AttnException.badInput(
                            "runInto: output " + i + " is the array of input '" + e.getKey() + "'");
        }
        return run(inputs, Map.of(), outputs, null);
    }

    private List<Tensor> run(
            Map<String, Tensor> inputs, Map<String, Buffer> bound, float[][] into, DoubleConsumer progress) {
        if (closed) throw new IllegalStateException("executor is closed");
        Buffer[] values = new Buffer[graph.nodes().size()];
        List<Buffer> uploaded = new ArrayList<>();
        try {
            bindInputs(inputs, bound, values, uploaded);
            return execute(values, into, progress);
        } finally {
            for (Buffer b : uploaded) backend.release(b);
        }
    }

    private void bindInputs(
            Map<String, Tensor> inputs, Map<String, Buffer> bound, Buffer[] values, List<Buffer> uploaded) {
        for (var e : graph.inputs().entrySet()) {
            Node n = e.getValue();
            Buffer b = bound.get(e.getKey());
            if (b != null) {
                if (b.capacity() < n.shape().size())
                    throw AttnException.shape("bound input '" + e.getKey() + "' holds " + b.capacity()
                            + " elements, graph expects " + n.shape());
                values[n.id()] = b;
                continue;
            }
            Tensor t = inputs.get(e.getKey());
            if (t == null) throw AttnException.badInput("missing graph input '" + e.getKey() + "'");
            if (!t.shape().equals(n.shape()))
                throw AttnException.shape(
                        "input '" + e.getKey() + "' has shape " + t.shape() + ", graph expects " + n.shape());
            if (mutated[n.id()]) { // never write into the caller's array
                b = backend.allocate(DType.F32, Math.max(1, t.data().length));
                uploaded.add(b);
                backend.upload(t.data(), t.data().length, b);
            } else {
                b = backend.hostView(t.data());
                uploaded.add(b);
            }
            values[n.id()] = b;
        }
    }

    /** Runs the steps; outputs go to fresh arrays, or to {@code into} (one per graph output) when it is not null. */
    private List<Tensor> execute(Buffer[] values, float[][] into, DoubleConsumer progress) {
        double[] done = progress == null ? null : workDone();
        Buffer[] arena = resources.takeArena(plan.slotSizes());
        // a backend that can write host arrays computes graph outputs straight into the returned ones
        List<Node> outputs = graph.outputs();
        float[][] direct = new float[graph.nodes().size()][];
        Buffer[] views = new Buffer[graph.nodes().size()];
        List<Buffer> owned = new ArrayList<>();
        try {
            for (int i = 0; i < outputs.size(); i++) {
                Node o = outputs.get(i);
                if (o.isLeaf() || views[o.id()] != null || plan.slotOf(o) < 0) continue;
                float[] host = into != null ? into[i] : new float[o.shape().size()];
                Buffer v = backend.outputView(host);
                if (v == null) break; // the backend computes in its own memory: outputs are downloaded
                owned.add(v);
                views[o.id()] = v;
                direct[o.id()] = host;
            }
            for (Node n : graph.nodes()) if (n.op() == Op.CONSTANT) values[n.id()] = constants[n.id()];
            List<Program.Step> steps = program.steps();
            for (int s = 0; s < steps.size(); s++) {
                Program.Step step = steps.get(s);
                Node n = step.output();
                Buffer[] ins = new Buffer[step.inputs().size()];
                for (int i = 0; i < ins.length; i++)
                    ins[i] = values[step.inputs().get(i).id()];
                Buffer out = step.inPlace() >= 0
                        ? ins[step.inPlace()]
                        : views[n.id()] != null ? views[n.id()] : arena[plan.slotOf(n)];
                int sc = plan.scratchOf(s);
                step.kernel().run(out, ins, sc < 0 ? null : arena[sc]);
                values[n.id()] = out;
                if (progress != null) progress.accept(done[s]);
            }
            List<Tensor> outs = new ArrayList<>(outputs.size());
            for (int i = 0; i < outputs.size(); i++) {
                Node o = outputs.get(i);
                float[] host = direct[o.id()];
                if (host != null) direct[o.id()] = null; // a second listing of the same output gets its own copy
                else {
                    host = into != null ? into[i] : new float[o.shape().size()];
                    backend.download(values[o.id()], host, host.length);
                }
                outs.add(Tensor.of(o.shape(), host));
            }
            if (progress != null) progress.accept(1.0);
            return outs;
        } finally {
            resources.giveBack(arena);
            for (Buffer b : owned) backend.release(b);
        }
    }

    /**
     * By step: the fraction of the graph's estimated work done once that step has run (below 1: the outputs' download
     * comes last).
     */
    private double[] workDone() {
        double[] w = workDone;
        if (w != null) return w;
        List<Program.Step> steps = program.steps();
        w = new double[steps.size()];
        double total = 0;
        for (int s = 0; s < w.length; s++) {
            for (Node n : steps.get(s).covers()) total += work(n);
            w[s] = total;
        }
        for (int i = 0; i < w.length; i++) w[i] = 0.999 * w[i] / Math.max(total, 1);
        return workDone = w;
    }

    /** The estimated work of one op: its floating-point operations, or its output's size when it moves memory. */
    private static double work(Node n) {
        double out = n.shape().size();
        return switch (n.params()) {
            case OpParams.MatMul m -> {
                var a = n.input(0).shape();
                yield 2 * out * (m.transA() ? a.dim(-2) : a.dim(-1));
            }
            case OpParams.Attention a ->
                4 * n.input(0).shape().size() * (double) n.input(1).shape().dim(-2);
            default -> out;
        };
    }

    /** Releases pooled buffers and constants when they are this executor's own. Callers must not run after closing. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (ownsResources) resources.close();
    }
}
