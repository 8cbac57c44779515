package io.attn.exec;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.Buffer;
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
 * Runs one {@link Graph} on one {@link Backend}. Constants are uploaded once, when the executor is made (or once per
 * model, when its executors share {@link Resources}). Intermediate values live in backend buffers planned by {@link
 * BufferPlan}; the set of buffers for one run (an arena) is pooled and reused, so steady-state calls allocate only
 * their outputs. Values stay on the backend from the inputs' upload
 * to the outputs' download.
 *
 * <p>A {@link Op#CACHE_WRITE} runs in place: its output is its cache input's buffer. Such a cache input may be bound
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
    private final BufferPlan plan;
    private final Buffer[] constants; // by node id; null for non-constants
    private final boolean[] mutated; // by node id: inputs that a cache write modifies
    private final Resources resources;
    private final boolean ownsResources;
    private volatile boolean closed;
    private volatile double[] workDone; // by node id, made on the first run that reports progress

    /** An executor with resources of its own, released when it is closed. */
    public Executor(Backend backend, Graph graph) {
        this(graph, new Resources(backend), true);
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
        this.mutated = new boolean[graph.nodes().size()];
        int[] readers = new int[graph.nodes().size()];
        for (Node n : graph.nodes()) for (Node in : n.inputs()) readers[in.id()]++;
        for (Node n : graph.nodes())
            if (n.op() == Op.CACHE_WRITE) {
                Node c = n.input(0);
                if (c.op() != Op.INPUT
                        || readers[c.id()] != 1
                        || graph.outputs().contains(c))
                    throw new IllegalArgumentException(
                            n + ": the cache must be a graph input read by this cache write only");
                mutated[c.id()] = true;
            }
        this.plan = new BufferPlan(graph);
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
     * by a {@link Op#CACHE_WRITE} holds the written cache after the call.
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

    /** Runs the nodes; outputs go to fresh arrays, or to {@code into} (one per graph output) when it is not null. */
    private List<Tensor> execute(Buffer[] values, float[][] into, DoubleConsumer progress) {
        double[] done = progress == null ? null : workDone();
        Buffer[] arena = resources.takeArena(plan.slotSizes());
        // a backend whose host views share the array computes outputs straight into the returned arrays
        float[][] direct = new float[graph.nodes().size()][];
        List<Node> outputs = graph.outputs();
        if (backend.hostViewIsShared())
            for (int i = 0; i < outputs.size(); i++) {
                Node o = outputs.get(i);
                if (!o.isLeaf() && o.op() != Op.CACHE_WRITE && direct[o.id()] == null)
                    direct[o.id()] =
                            into != null ? into[i] : new float[o.shape().size()];
            }
        try {
            for (Node n : graph.nodes()) {
                switch (n.op()) {
                    case INPUT -> {}
                    case CONSTANT -> values[n.id()] = constants[n.id()];
                    default -> {
                        // CACHE_WRITE updates its cache input in place; outputs may be computed straight into
                        // the returned arrays; everything else gets its planned arena slot
                        Buffer out = n.op() == Op.CACHE_WRITE
                                ? values[n.input(0).id()]
                                : direct[n.id()] != null ? backend.hostView(direct[n.id()]) : arena[plan.slotOf(n)];
                        Buffer[] ins = new Buffer[n.inputs().size()];
                        for (int i = 0; i < ins.length; i++)
                            ins[i] = values[n.input(i).id()];
                        backend.execute(n, out, ins);
                        values[n.id()] = out;
                        if (progress != null) progress.accept(done[n.id()]);
                    }
                }
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
        }
    }

    /**
     * By node id: the fraction of the graph's estimated work done once that node has run (below 1: the outputs'
     * download comes last).
     */
    private double[] workDone() {
        double[] w = workDone;
        if (w != null) return w;
        List<Node> nodes = graph.nodes();
        w = new double[nodes.size()];
        double total = 0;
        for (Node n : nodes) w[n.id()] = total += n.isLeaf() ? 0 : work(n);
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
            case OpParams.Softmax s
            when s.product() -> 2 * out * n.input(0).shape().dim(-1);
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
